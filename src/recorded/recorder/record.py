"""Decide what to record, run it, and keep the store consistent. Standard library only.

Only missing, stale, failed or unreadable recordings run (everything with ``force``); a failed run
never replaces a good recording; each recording is written at once, so an interrupted session keeps it."""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..config.targets import Target
from ..model.busy import LIMIT, too_busy
from ..model.machines import Machine
from ..model.recording import Ending, Recording, Run, utc_stamp
from ..model.snippets import DEFAULT_TIMEOUT, Snippet, code_sha256
from ..model.store import Standing, State, Store
from . import busy as busy_
from . import guard, runner, sandbox, this_machine
from .runner import RunResult

#: With --refuse-busy, how often to look again, and how long to wait, before refusing a run.
BUSY_RETRIES, BUSY_WAIT_S = 3, 2.0

#: States that a plain (incremental) run brings up to date.
TO_RECORD = {State.MISSING, State.STALE, State.FAILED, State.INVALID}

Runs = list[tuple[RunResult, dict | None]]  #: an item's runs, each with how busy the machine was


def plan(store: Store, snippets: list[Snippet], targets: Iterable[Target]) -> list[Standing]:
    """Every snippet on every target, in that order, with its state."""
    return [store.standing(s, t) for s in snippets for t in targets]


def to_run(items: list[Standing], force: bool) -> list[Standing]:
    return [i for i in items if i.state is not State.NOT_APPLICABLE and (force or i.state in TO_RECORD)]


def _eta(items: list[Standing]) -> str:
    """Time left from earlier durations; said only when every remaining item has one."""
    known = [i.last_duration for i in items if i.last_duration is not None]
    return f" (ETA {sum(known):.0f} s)" if len(known) == len(items) and sum(known) >= 1 else ""


@dataclass(frozen=True)
class RunLimits:
    """How ``record`` runs: each run's ``timeout`` (None: the snippet's own), whether to stop at the
    first failure, to refuse rather than keep a run on a busy machine, and a timing snippet's ``runs``."""

    timeout: float | None = None
    fail_fast: bool = False
    refuse_busy: bool = False
    runs: int = 1


def record(
    store: Store,
    items: list[Standing],
    limits: RunLimits = RunLimits(),
    out: TextIO | None = None,
    on_run: Callable[[Recording, bool], None] | None = None,
    admit: Callable[[Target, Machine], None] | None = None,
) -> tuple[list[Recording], list[Standing]]:
    """Run the items in order; returns the recordings made and the items that failed.

    A target's check must pass first (else TargetCheckFailed), and ``admit`` may refuse the machine
    by raising. ``on_run(recording, written)`` follows each recording, so a caller keeps it on Ctrl-C."""
    out = out or sys.stderr
    session = _Session(store, limits.refuse_busy, out)

    machines: dict[Target, Machine] = {}
    made, failed = [], []
    for n, item in enumerate(items, 1):
        s, t = item.snippet, item.target
        if t not in machines:
            machines[t] = _machine(store, t, admit)
        print(f"[{n}/{len(items)}] {s.name} {t.name}{_eta(items[n - 1 :])} …", end="", flush=True, file=out)
        started = dt.datetime.now(dt.UTC)
        # A timing snippet runs in several fresh processes: the spread between runs, which one run hides.
        done, refused = session.repeat(
            item, limits.runs if s.timing else 1, limits.timeout or s.timeout or DEFAULT_TIMEOUT
        )
        print(file=out, flush=True)
        if refused or not done:
            failed.append(item)
            if limits.fail_fast and "changed files in the project" in refused:
                break
            continue
        rec = _recording(item, done, started, machines[t])
        written = rec.ok or not (item.recording and item.recording.ok)
        if written:
            store.write(rec)
            made.append(rec)
        if on_run:
            on_run(rec, written)
        if not rec.ok:
            failed.append(item)
            kept = " (the previous good recording is kept)" if item.recording and item.recording.ok else ""
            print(f"    {s.name} on {t.name}: {rec.status}, exit code {rec.exit_code}{kept}", file=out)
            for line in rec.stderr[-12:]:
                print(f"    | {line}", file=out)
            if limits.fail_fast:
                break
    return made, failed


def _machine(store: Store, t: Target, admit: Callable[[Target, Machine], None] | None) -> Machine:
    """Who records on ``t``, after its check proved the machine is what it claims."""
    printed = runner.check(t)  # raises TargetCheckFailed: nothing is written
    info = this_machine.machine(
        store.root, runner.target_env(t, Path(tempfile.gettempdir())), device=t.device
    )
    info["target"] = {"name": t.name, "description": t.description, "env": dict(t.env), "check": printed}
    machine = Machine(info)
    if admit:
        admit(t, machine)  # raises before anything is recorded on t
    return machine


@dataclass
class _Session:
    store: Store
    refuse_busy: bool
    out: TextIO
    #: How busy the machine was around the last run: its "after" is the next run's "before", so
    #: no window is measured twice.
    previous: dict | None = None

    def repeat(self, item: Standing, count: int, limit: float) -> tuple[Runs, str]:
        """The item's runs, and why they were refused."""
        done: Runs = []
        for k in range(count):
            label = f" run {k + 1}/{count}:" if count > 1 else ""
            run, self.previous, refused = self.once(item, limit)
            if refused:
                print(f"{label} refused: {refused}", file=self.out, flush=True)
                return done, refused
            assert run is not None
            load = self.previous
            noted = f" ({busy_.describe(load)})" if load else ""
            print(f"{label} {run.duration_s:.1f} s {run.status}{noted}", end="", flush=True, file=self.out)
            if load is not None and too_busy(load):
                policy = (
                    "not kept (--refuse-busy), the default; --keep-busy keeps such runs"
                    if self.refuse_busy
                    else "kept (--keep-busy; --refuse-busy, the default, would not keep it)"
                )
                warning = f"other work used more than {LIMIT * 100:.0f}% of the CPUs around this timing run"
                print(f"\n    warning: {warning}; its figures may be off; {policy}", end="", file=self.out)
                if self.refuse_busy:
                    return done, "the machine was busy during the run"
            done.append((run, load))
            if run.status is not Ending.OK:
                break  # a failed run is the recording: the others are not made
        return done, ""

    def once(self, item: Standing, limit: float) -> tuple[RunResult | None, dict | None, str]:
        """One fresh run: its result, how busy the machine was around it, and why it was refused."""
        store, previous = self.store, self.previous
        load: dict | None = None
        if item.snippet.timing:
            if previous and previous.get("after") is not None:
                load = {"before": previous["after"], "how": previous["how"], "cpus": previous["cpus"]}
            else:
                load = self.measure("before")
            for _ in range(BUSY_RETRIES if self.refuse_busy else 0):  # a passing burst may end
                if not too_busy(load):
                    break
                time.sleep(BUSY_WAIT_S)
                load = self.measure("before")
            if self.refuse_busy and too_busy(load):
                why = f"the machine is busy ({busy_.describe(load)}, the limit is {LIMIT * 100:.0f}%)"
                return None, load, f"{why}; nothing recorded"
        stores = [store.snippets_dir, store.recordings_dir]
        contained = sandbox.required()
        before = guard.take(store.root, stores, sandboxed=contained)
        limits = sandbox.Limits.of(store.settings)
        result = runner.run_snippet(item.snippet, item.target, limit, limits=limits)
        after = guard.take(store.root, stores, sandboxed=contained)
        if load is not None:
            load.update(self.measure("after"))
        if changed := guard.changes(before, after):
            done = guard.restore(before, after)
            why = (
                f"the run changed files in the project ({', '.join(changed)}); a snippet must not write "
                "into the project, so nothing it printed is kept and "
                f"{store.shown(store.snippets_dir)}/ and {store.shown(store.recordings_dir)}/ were put back"
                + "".join(f"; {d}" for d in done)
                + " (if you changed those files yourself while it ran, record it again)"
            )
            return None, load, why
        return result, load, ""

    def measure(self, when: str) -> dict:
        if (measured := busy_.other_load()) is None:
            return {when: None}
        share, how = measured
        return {when: round(share, 3), "how": how, "cpus": busy_.cpus()}


def _recording(item: Standing, done: Runs, started: dt.datetime, machine: Machine) -> Recording:
    """The recording of the item's runs: the first one, with what the others printed; or the failed one."""
    first, load = done[-1] if done[-1][0].status is not Ending.OK else done[0]
    return Recording(
        snippet=item.snippet.name,
        target=item.target.name,
        sha256=hashlib.sha256(first.source).hexdigest(),
        code_sha256=code_sha256(first.source),
        status=first.status,
        exit_code=first.exit_code,
        stdout=first.stdout,
        stderr=first.stderr,
        duration_s=first.duration_s,
        recorded_at=utc_stamp(started),
        machine=machine,
        busy=load,
        later_runs=[Run(r.stdout, r.duration_s, busy) for r, busy in done[1:]]
        if first.status is Ending.OK
        else [],
        code=first.source.decode("utf-8", errors="replace"),
    )
