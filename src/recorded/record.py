"""Decide what to record, run it, and keep the store consistent.

Standard library only. The rules: only missing, stale, failed or unreadable recordings
run (everything with ``force``); a failed or timed-out run never replaces a good
recording; each finished recording is written at once, so an interrupted session keeps
what it finished.
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from . import provenance, runner
from .snippets import DEFAULT_TIMEOUT, Snippet
from .store import Recording, State, Store

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
    return [
        i for i in items
        if i.state is not State.NOT_APPLICABLE and (force or i.state in TO_RECORD)
    ]


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
) -> tuple[list[Recording], list[Item]]:
    """Run the items in order. Returns the recordings made and the items that failed.

    Progress goes to ``out``, by default to ``sys.stderr`` as it is at call time (not at
    import time), so a redirected stderr receives it.
    """
    if out is None:
        out = sys.stderr
    machines: dict[str, dict] = {}

    def machine(target: str) -> dict:
        if target not in machines:
            if machine_for:
                machines[target] = machine_for(target)
            else:
                env = runner.target_env(target, Path(tempfile.gettempdir()))
                machines[target] = provenance.machine(store.root, env, python)
        return machines[target]

    made, failed = [], []
    for n, item in enumerate(items, 1):
        s, t = item.snippet, item.target
        print(f"[{n}/{len(items)}] {s.name} {t}{_eta(items[n - 1:])} …", end="", flush=True, file=out)
        info = machine(t)
        limit = timeout or s.timeout or DEFAULT_TIMEOUT
        started = dt.datetime.now(dt.timezone.utc)
        result = runner.run(s, t, limit, python=python)
        rec = Recording(
            snippet=s.name, target=t, sha256=s.sha256(), status=result.status,
            exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr,
            duration_s=result.duration_s,
            recorded_at=started.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            machine=info,
        )
        print(f" {result.duration_s:.1f} s {result.status}", file=out, flush=True)
        if rec.ok or not (item.recording and item.recording.ok):
            store.write(rec)
            made.append(rec)
        if not rec.ok:
            failed.append(item)
            kept = " (the previous good recording is kept)" if item.recording and item.recording.ok else ""
            print(f"    {s.name} on {t}: {result.status}, exit code {result.exit_code}{kept}", file=out)
            for line in result.stderr[-12:]:
                print(f"    | {line}", file=out)
            if fail_fast:
                break
    return made, failed
