"""`--import`: merge bundles into a store, and report each recording. Standard library only."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ..model.escape import visible
from ..model.store import Store
from ..recorder.bundles import MAX_BUNDLE_MB, Report, import_bundle
from .options import Options, UsageError


def do_import(opts: Options, store: Store) -> int:
    for name in opts.files:
        if not Path(name).is_file():
            hint = " (--import takes bundle files only, not snippets)" if name.endswith(".py") else ""
            raise UsageError(f"--import {name}: no such file{hint}. Nothing was imported.")
    return import_bundles(
        store, [Path(name) for name in opts.files], opts.allow_stale, sys.stdout, opts.max_bundle_mb
    )


#: The most outcome lines one bundle's report shows: a screenful; the rest are counted.
SHOWN = 20


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
    # The refusals first: they say why nothing was imported.
    ordered = sorted(report.outcomes, key=lambda o: o.action != "refused")
    for o in ordered[:SHOWN]:
        line = f"  {o.action:<12} {o.recording.snippet} on {o.recording.target}"
        say(line + (f": {o.why}" if o.why else ""))
    if len(ordered) > SHOWN:
        left = ordered[SHOWN:]
        refused = sum(o.action == "refused" for o in left)
        say(f"  … and {len(left)} more recording{'s' * (len(left) != 1)} ({refused} of them refused)")


def import_bundles(
    store: Store, paths: list[Path], allow_stale: bool, out: TextIO, max_mb: float = MAX_BUNDLE_MB
) -> int:
    """Import each bundle in turn, report per recording. 0 when nothing was refused, else 1."""
    counts = {"imported": 0, "unchanged": 0, "refused": 0, "not imported": 0}
    whole = refused = 0
    for path in paths:
        report = import_bundle(store, Path(path), allow_stale, max_mb)
        show(report, out)
        refused += report.refused
        whole += bool(report.error)
        for o in report.outcomes:
            counts[o.action] += 1
    words = ", ".join(f"{v} {k}" for k, v in counts.items() if v or k != "not imported")
    bundles = f"{len(paths)} bundle{'s' * (len(paths) != 1)}"
    as_a_whole = f"; {whole} bundle{'s' * (whole != 1)} refused as a whole" if whole else ""
    print(f"{bundles}: {words}{as_a_whole}", file=out)
    return 1 if refused else 0
