"""`--import`: merge bundles into a store, and report each recording."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from ..model.escape import visible
from ..model.store import Store
from ..recorder.bundles import Action, Report, import_bundle
from .options import Options, UsageError

#: The most outcome lines one bundle's report shows: a screenful; the rest are counted.
SHOWN = 20


def do_import(opts: Options, store: Store) -> int:
    """Import each bundle in turn, report per recording. 0 when nothing was refused, else 1."""
    for name in opts.files:
        if not Path(name).is_file():
            hint = " (--import takes bundle files only, not snippets)" if name.endswith(".py") else ""
            raise UsageError(f"--import {name}: no such file{hint}. Nothing was imported.")
    counts = Counter({Action.IMPORTED: 0, Action.UNCHANGED: 0, Action.REFUSED: 0})
    whole = refused = 0
    for name in opts.files:
        report = import_bundle(store, Path(name), opts.allow_stale, opts.max_bundle_mb)
        show(report, sys.stdout)
        refused += report.refused
        whole += bool(report.error)
        counts.update(o.action for o in report.outcomes)
    words = ", ".join(f"{v} {k}" for k, v in counts.items())
    n = len(opts.files)
    as_a_whole = f"; {whole} bundle{'s' * (whole != 1)} refused as a whole" if whole else ""
    print(f"{n} bundle{'s' * (n != 1)}: {words}{as_a_whole}")
    return 1 if refused else 0


def show(report: Report, out: TextIO) -> None:
    """One line for the bundle, one per recording (a screenful at most, the rest counted);
    everything that came from the bundle on one line each, whatever it holds."""

    def say(line: str) -> None:
        print(visible(line, newlines=False), file=out)

    b = report.bundle
    if b is None:
        say(f"refused    {report.error}")
        return
    who = str((b.machine or {}).get("description") or "an unnamed machine")[:200]
    n = len(b.recordings)
    say(f"{report.path}: {n} recording{'s' * (n != 1)}, made {b.created_at} on {who}")
    if report.error:
        say(f"  {report.error}")
    # why nothing was imported, first
    ordered = sorted(report.outcomes, key=lambda o: o.action is not Action.REFUSED)
    for o in ordered[:SHOWN]:
        say(
            f"  {o.action.value:<12} {o.recording.snippet} on {o.recording.target}"
            + (f": {o.why}" if o.why else "")
        )
    if left := ordered[SHOWN:]:
        refused = sum(o.action is Action.REFUSED for o in left)
        say(f"  … and {len(left)} more recording{'s' * (len(left) != 1)} ({refused} of them refused)")
