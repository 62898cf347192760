#!/usr/bin/env python3
"""Import bundles a reader sent, as untrusted input, and say what each recording shows.

    python scripts/review_bundles.py bundles/cpu-avx2-amd-epyc-2026-12-05.json ...
    (make import BUNDLES=...; the bundle workflow runs it on a pull request that adds one)

Each bundle goes through the recorder's own ``--import`` (all or nothing, every check it
makes), into this checkout's recordings/. Then, one line per recording: whether every claim
the pages make on its snippet and target holds in each of its runs, and what its verdict
lines say. Last, the strict build of the site with the bundles in. Exit 0 when every bundle
was imported whole, every claim held and the build passed; 1 otherwise. Everything printed
that came from a bundle goes through the recorder's escaping: a bundle is never markup.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from recorded.cli import bundle_import
from recorded.model import claims, escape, lines
from recorded.model.files import locked
from recorded.model.recording import Recording
from recorded.model.store import Store
from recorded.pages import blocks, table_data
from recorded.pages.site import read_site
from recorded.recorder.bundles import import_bundle

ROOT = Path(__file__).resolve().parents[1]


#: A block that shows a snippet: its page, the page's line of its first claim, and its claims.
Shown = tuple[str, int, blocks.Block]


def review(rec: Recording, shown: list[Shown]) -> tuple[bool, str]:
    """(whether every claim holds, a line) for one imported recording."""
    where = f"{rec.snippet} on {rec.target}"
    if not rec.ok:
        return False, f"failed {where}: the run ended with status {rec.status}"
    runs = rec.outputs
    broken, count = [], 0
    for page, first, spec in shown:
        for group in spec.claims_for(rec.target):
            count += len(group)
            for n, stdout in enumerate(runs, 1):
                found = claims.match(list(group), stdout)
                broken += [
                    f"{claim!r} ({page}:{first + spec.claim_lines.get(claim, 0)}) not printed in run {n} of {len(runs)}"
                    for claim, at in zip(group, found)
                    if at is None
                ]
    said = [
        f"{line.label}: {line.value} {lines.runs_note(runs, line.value, line.label, nth)}"
        for _, line, nth in lines.scan(rec.stdout)
        if line.kind == "verdict" and line.value in lines.TIMING_VERDICTS
    ]
    verdicts = f"; {', '.join(said)}" if said else ""
    if broken:
        return False, f"fails  {where}: {'; '.join(broken[:3])}" + (
            f" and {len(broken) - 3} more" if len(broken) > 3 else ""
        )
    if not shown:
        return True, f"ok     {where}: shown on no page{verdicts}"
    pages = ", ".join(dict.fromkeys(page for page, _, _ in shown))
    each = "its one run" if len(runs) == 1 else f"each of its {len(runs)} runs"
    return True, f"ok     {where}: {count} claims of {pages} hold in {each}{verdicts}"


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: review_bundles.py BUNDLE.json ...  (make import BUNDLES=...)", file=sys.stderr)
        return 2
    store = Store(ROOT)
    docs = read_site(ROOT).docs_dir
    by_snippet: dict[str, list[Shown]] = {}
    for b in table_data.page_blocks(docs):
        try:
            spec = blocks.parse(b.snippet, b.body, store.targets.names, b.line + 1)
        except blocks.BlockError:
            continue  # the build names it
        by_snippet.setdefault(spec.snippet, []).append((f"docs/{b.page}", b.line + 1, spec))
    good = True
    for name in argv:
        with locked(store.recordings_dir, "review_bundles.py"):
            report = import_bundle(store, Path(name))
        bundle_import.show(report, sys.stdout)
        good &= not report.refused
        for outcome in report.outcomes:
            if outcome.action in ("imported", "unchanged"):
                ok, line = review(outcome.recording, by_snippet.get(outcome.recording.snippet, []))
                good &= ok
                print(f"  {line}")
    with tempfile.TemporaryDirectory(prefix="review-site-") as site:
        built = subprocess.run(
            [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-d", site],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
    warnings = [line for line in built.stderr.splitlines() if line.startswith("WARNING")]
    print("build  mkdocs build --strict " + ("passed" if built.returncode == 0 else "failed:"))
    for line in warnings:
        print(f"  {line}")
    return 0 if good and built.returncode == 0 else 1


if __name__ == "__main__":
    sys.stdout = escape.SafeStream(sys.stdout)  # what a bundle holds never reaches the terminal raw
    sys.exit(main(sys.argv[1:]))
