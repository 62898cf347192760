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
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from . import busy as busy_
from . import guard, provenance, runner
from .snippets import DEFAULT_TIMEOUT, Snippet, code_sha256
from .store import Recording, State, Store

#: With --refuse-busy, how often to look again, and how long to wait, before refusing a run.
BUSY_RETRIES, BUSY_WAIT_S = 3, 2.0

#: States that a plain (incremental) run brings up to date.
TO_RECORD = {State.MISSING, State.STALE, State.FAILED, State.INVALID}


@dataclass
class Item:
    snippet: Snippet
    target: str
    state: State
    recording: Recording | None
    reason: str

    @property
    def last_duration(self) -> float | None:
        return self.recording.duration_s if self.recording else None


def plan(store: Store, snippets: list[Snippet], targets: tuple[str, ...]) -> list[Item]:
    return [Item(s, t, *store.state(s, t)) for s in snippets for t in targets]


def to_run(items: list[Item], force: bool) -> list[Item]:
    return [i for i in items if i.state is not State.NOT_APPLICABLE and (force or i.state in TO_RECORD)]


def _eta(items: list[Item]) -> str:
    """Time left from earlier durations; said only when every remaining item has one."""
    known = [i.last_duration for i in items if i.last_duration is not None]
    if len(known) < len(items) or sum(known) < 1:
        return ""
    return f" (ETA {sum(known):.0f} s)"


def record(
    store: Store,
    items: list[Item],
    timeout: float | None = None,
    fail_fast: bool = False,
    out: TextIO | None = None,
    python: str = sys.executable,
    machine_for: Callable[[str], dict] | None = None,
    on_run: Callable[[Recording, bool], None] | None = None,
    refuse_busy: bool = False,
    other_load: Callable[[], tuple[float, str] | None] | None = None,
    admit: Callable[[str, dict], None] | None = None,
) -> tuple[list[Recording], list[Item]]:
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
    machines: dict[str, dict] = {}

    def machine(target: str) -> dict:
        """Who records on target, after its check proved the machine is what it claims."""
        if target not in machines:
            t = store.targets.get(target)
            printed = runner.check(t, python)  # raises TargetCheckFailed: nothing is written
            if machine_for:
                info = dict(machine_for(target))
            else:
                env = runner.target_env(t, Path(tempfile.gettempdir()))
                info = provenance.machine(store.root, env, python, t.device)
            info["target"] = {
                "name": t.name,
                "description": t.description,
                "env": dict(t.env),
                "check": printed,
            }
            if admit:
                admit(target, info)  # raises before anything is recorded on target
            machines[target] = info
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
        result = runner.run(s, store.targets.get(t), limit, python=python)
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


def shard(items: list[Item], index: int, count: int) -> list[Item]:
    """The items that runner ``index`` of ``count`` (1-based) takes, in their given order.

    Deterministic, so every runner computes the same split from the same checkout: greedy
    longest-processing-time on the last recorded duration of each item (a stale or failed
    recording's duration counts too); an item without one counts as the median of the
    known durations, or 1 s when none is known. The longest item goes first, to the
    runner with the least work so far (the lowest number on a tie); equal durations go in
    order of snippet name. Items of different targets are split separately, and items not
    applicable to their target take part in no shard. The ``count`` shards together hold
    every applicable item exactly once.
    """
    if not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: need 1 <= I <= N")
    taken: set[int] = set()
    for target in dict.fromkeys(i.target for i in items):
        group = [i for i in items if i.target == target and i.state is not State.NOT_APPLICABLE]
        weights = shard_weights(group)
        loads = [0.0] * count
        for item in sorted(group, key=lambda i: (-weights[id(i)], i.snippet.name)):
            n = min(range(count), key=lambda k: (loads[k], k))
            loads[n] += weights[id(item)]
            if n == index - 1:
                taken.add(id(item))
    return [i for i in items if id(i) in taken]


@dataclass(frozen=True)
class Part:
    """Shard ``index`` of ``count`` on one target, computed once and passed to whoever needs
    it: the recorder runs its items, --list and --check show them, each says what it takes."""

    index: int
    count: int
    target: str
    taken: tuple[Item, ...]
    applicable: int  # the target's snippets that take part in any shard
    seconds: float  # this part's expected time, by recorded durations
    total: float  # every shard's together
    durations_known: bool

    @property
    def names(self) -> frozenset[str]:
        return frozenset(i.snippet.name for i in self.taken)


def part(published: Store, snippets: list[Snippet], target: str, which: tuple[int, int]) -> Part:
    """Which of the snippets shard I/N takes on target, by the durations in ``published``
    (recordings/, the same on every runner, whatever --out says)."""
    index, count = which
    items = plan(published, snippets, (target,))
    taken = shard(items, index, count)
    applicable = [i for i in items if i.state is not State.NOT_APPLICABLE]
    weights = shard_weights(applicable)
    return Part(
        index,
        count,
        target,
        tuple(taken),
        len(applicable),
        seconds=sum(weights[id(i)] for i in taken),
        total=sum(weights.values()),
        durations_known=any(i.last_duration is not None for i in items),
    )


def shard_weights(items: list[Item]) -> dict[int, float]:
    """Seconds each item is expected to take, by ``id(item)``: see ``shard``."""
    known = sorted(i.last_duration for i in items if i.last_duration is not None)
    if known:
        mid = len(known) // 2
        guess = known[mid] if len(known) % 2 else (known[mid - 1] + known[mid]) / 2
    else:
        guess = 1.0
    return {id(i): (i.last_duration if i.last_duration is not None else guess) for i in items}
