"""Decide what to record, run it, and keep the store consistent.

Standard library only. The rules: only missing, stale, failed or unreadable recordings
run (everything with ``force``); a failed or timed-out run never replaces a good
recording; each finished recording is written at once, so an interrupted session keeps
what it finished.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..model.machines import Machine
from ..model.snippets import DEFAULT_TIMEOUT, Snippet, code_sha256
from ..model.store import Recording, State, Status, Store
from . import busy as busy_
from . import guard, runner, this_machine

#: With --refuse-busy, how often to look again, and how long to wait, before refusing a run.
BUSY_RETRIES, BUSY_WAIT_S = 3, 2.0

#: States that a plain (incremental) run brings up to date.
TO_RECORD = {State.MISSING, State.STALE, State.FAILED, State.INVALID}


def plan(store: Store, snippets: list[Snippet], targets: tuple[str, ...]) -> list[Status]:
    """Every snippet on every target, in that order, with its state."""
    return [store.status(s, t) for s in snippets for t in targets]


def to_run(items: list[Status], force: bool) -> list[Status]:
    return [i for i in items if i.state is not State.NOT_APPLICABLE and (force or i.state in TO_RECORD)]


def _eta(items: list[Status]) -> str:
    """Time left from earlier durations; said only when every remaining item has one."""
    known = [i.last_duration for i in items if i.last_duration is not None]
    if len(known) < len(items) or sum(known) < 1:
        return ""
    return f" (ETA {sum(known):.0f} s)"


def record(
    store: Store,
    items: list[Status],
    timeout: float | None = None,
    fail_fast: bool = False,
    out: TextIO | None = None,
    python: str = sys.executable,
    machine_for: Callable[[str], dict] | None = None,
    on_run: Callable[[Recording, bool], None] | None = None,
    refuse_busy: bool = False,
    other_load: Callable[[], tuple[float, str] | None] | None = None,
    admit: Callable[[str, Machine], None] | None = None,
) -> tuple[list[Recording], list[Status]]:
    """Run the items in order. Returns the recordings made and the items that failed.

    Before the first run on a target, the target's check must pass (see
    ``runner.check``); if it fails, TargetCheckFailed is raised and nothing more is
    recorded. Around a timing snippet's run, the share of the CPUs used by other work is
    measured and stored; above ``busy.LIMIT`` it is a warning, and with ``refuse_busy``
    the run is not made (still busy before, after a few tries) or not kept (busy after).
    Progress goes to ``out``, by default to ``sys.stderr`` as it is at call time (not at
    import time), so a redirected stderr receives it. ``on_run(recording, written)`` is
    called after every run, also for a failed run that was not written because a good
    recording is kept, and before the next run starts (so a caller keeps what finished
    before a Ctrl-C). ``admit(target, machine)`` may refuse a target's machine, by raising,
    before its first run: one tab, one machine (see kinds.py).
    """
    if out is None:
        out = sys.stderr
    other_load = other_load or busy_.other_load
    machines: dict[str, Machine] = {}

    def machine(target: str) -> Machine:
        """Who records on target, after its check proved the machine is what it claims."""
        if target not in machines:
            t = store.targets.get(target)
            printed = runner.check(t, python)  # raises TargetCheckFailed: nothing is written
            if machine_for:
                info = dict(machine_for(target))
            else:
                env = runner.target_env(t, Path(tempfile.gettempdir()))
                info = this_machine.machine(store.root, env, python, t.device)
            info["target"] = {
                "name": t.name,
                "description": t.description,
                "env": dict(t.env),
                "check": printed,
            }
            if admit:
                admit(target, Machine(info))  # raises before anything is recorded on target
            machines[target] = Machine(info)
        return machines[target]

    made, failed = [], []
    for n, item in enumerate(items, 1):
        s, t = item.snippet, item.target
        info = machine(t)
        print(f"[{n}/{len(items)}] {s.name} {t}{_eta(items[n - 1 :])} …", end="", flush=True, file=out)
        limit = timeout or s.timeout or DEFAULT_TIMEOUT
        load: dict | None = None
        if s.timing:
            load = _measure(other_load, "before")
            for _ in range(BUSY_RETRIES if refuse_busy else 0):  # a passing burst may end
                if not busy_.too_busy(load):
                    break
                time.sleep(BUSY_WAIT_S)
                load = _measure(other_load, "before")
            if refuse_busy and busy_.too_busy(load):
                print(
                    f" refused: the machine is busy ({busy_.describe(load)}, the limit is "
                    f"{busy_.LIMIT * 100:.0f}%); nothing recorded",
                    file=out,
                    flush=True,
                )
                failed.append(item)
                continue
        started = dt.datetime.now(dt.UTC)
        before = guard.take(store.root, [store.snippets_dir, store.recordings_dir])
        result = runner.run_snippet(s, store.targets.get(t), limit, python=python)
        after = guard.take(store.root, [store.snippets_dir, store.recordings_dir])
        if load is not None:
            load.update(_measure(other_load, "after"))
        if changed := guard.changes(before, after):
            guard.restore(before, after)
            print(
                f" refused: the run changed files in the project ({', '.join(changed)}); a snippet "
                "must not write into the project, so nothing it printed is kept and "
                f"{store.shown(store.snippets_dir)}/ and {store.shown(store.recordings_dir)}/ were put back",
                file=out,
                flush=True,
            )
            failed.append(item)
            if fail_fast:
                break
            continue
        rec = Recording(
            snippet=s.name,
            target=t,
            sha256=hashlib.sha256(result.source).hexdigest(),
            code_sha256=code_sha256(result.source),
            status=result.status,
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            duration_s=result.duration_s,
            recorded_at=started.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            machine=info,
            busy=load,
        )
        busy_note = f" ({busy_.describe(load)})" if load else ""
        print(f" {result.duration_s:.1f} s {result.status}{busy_note}", file=out, flush=True)
        disturbed = load is not None and busy_.too_busy(load)
        if disturbed:
            print(
                f"    warning: other work used more than {busy_.LIMIT * 100:.0f}% of the CPUs around "
                f"this timing run; its figures may be off"
                + ("; not kept (--refuse-busy)" if refuse_busy else "; --refuse-busy would not keep it"),
                file=out,
            )
        written = (rec.ok or not (item.recording and item.recording.ok)) and not (disturbed and refuse_busy)
        if written:
            store.write(rec)
            made.append(rec)
        if on_run:
            on_run(rec, written)
        if rec.ok and disturbed and refuse_busy:
            failed.append(item)
        elif not rec.ok:
            failed.append(item)
            kept = " (the previous good recording is kept)" if item.recording and item.recording.ok else ""
            print(f"    {s.name} on {t}: {result.status}, exit code {result.exit_code}{kept}", file=out)
            for line in result.stderr[-12:]:
                print(f"    | {line}", file=out)
            if fail_fast:
                break
    return made, failed


def _measure(other_load: Callable[[], tuple[float, str] | None], when: str) -> dict:
    measured = other_load()
    if measured is None:
        return {when: None}
    share, how = measured
    return {when: round(share, 3), "how": how, "cpus": busy_.cpus()}
