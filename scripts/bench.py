#!/usr/bin/env python3
"""Measure the project's speed targets: `python scripts/bench.py [--repeat 5] [--skip peer]`.

Benchmarks for the project's own speed targets (issue: instant rebuilds, incremental
recording, one run per snippet, every page fast for a reader). Timings are medians of
repeated runs on this machine; timed tests would be flaky on shared machines, so these
figures live here instead. This is site tooling (an HTTP server, Lighthouse, copies of
the site), so it lives beside the site's scripts, not in the engine (src/recorded/).

The reader's side is Lighthouse's performance score, on its default mobile run (a
simulated slow 4G link and a 4x slower CPU), for every page of the built site served on
127.0.0.1, one row per page and one for the lowest. Lighthouse comes from npm
(`npm install --prefix .cache/npm lighthouse`, which `make bench` does); without it, or
without Chromium, those rows are skipped with the reason.

The reading report (scripts/reading.py) adds what a reader meets on the lesson pages:
words, code lines, examples opening with no output, recorder commands. Those are counts,
the same on every run of one site, so each is measured once and shows no median;
--reading-before REF puts each one's count at that commit beside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The engine, importable without installing the project, as for scripts/record_runs.py.
sys.path.insert(0, str(ROOT / "src"))

import reading  # noqa: E402 (beside this script)
from site_tools import copy_site as _copy_site  # noqa: E402 (beside this script)
from site_tools import serve_site, site_pages  # noqa: E402

from recorded.model import describe  # noqa: E402
from recorded.model.machines import Machine, this_cpu  # noqa: E402
from recorded.model.snippets import discover  # noqa: E402
from recorded.model.store import State, Store  # noqa: E402
from recorded.pages import blocks  # noqa: E402
from recorded.recorder.choose import AUTO, choose  # noqa: E402


@dataclass
class Figure:
    name: str
    budget: str
    samples: list[float] = field(default_factory=list)
    value: float | None = None  # the figure compared with the budget, when not the median
    limit: float | None = None
    unit: str = " s"
    spread: str | None = None  # when the compared figure is not the samples themselves
    notes: list[str] = field(default_factory=list)
    at_least: bool = False  # the limit is a floor (a score), not a ceiling (a time)
    skipped: str | None = None  # why the figure was not measured

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def ok(self) -> bool | None:
        if self.limit is None or self.skipped:
            return None
        figure = self.value if self.value is not None else self.median
        return figure >= self.limit if self.at_least else figure <= self.limit

    def row(self) -> str:
        if self.skipped:
            return f"| {self.name} | skipped: {self.skipped} | - | {self.budget} | - |"
        spread = self.spread or (
            f"{min(self.samples):.2f}–{max(self.samples):.2f} s (n={len(self.samples)})"
            if self.samples
            else "-"
        )
        figure = self.value if self.value is not None else self.median
        shown = (f"{figure:,}" if isinstance(figure, int) else f"{figure:.3g}") + self.unit
        verdict = {True: "within", False: "UNDER" if self.at_least else "OVER", None: "-"}[self.ok]
        return f"| {self.name} | {shown} | {spread} | {self.budget} | {verdict} |"


def _timed(cmd: list[str], cwd: Path, **kw) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return elapsed, done


def copy_site(root: Path, dst: Path) -> Path:
    return _copy_site(root, dst, extra=("scripts/record_runs.py",))


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def first_page_with_a_block(root: Path) -> str:
    """A page that shows recordings, under docs/: the one a prose edit is timed on."""
    for page in sorted((root / "docs").rglob("*.md")):
        if blocks.headers(page.read_text(encoding="utf-8").splitlines()):
            return page.relative_to(root / "docs").as_posix()
    raise RuntimeError("no page under docs/ shows a recording")


def build_after_prose_edit(root: Path, repeat: int, work: Path) -> Figure:
    fig = Figure("`mkdocs build --strict` after a prose edit", "≤ 2 s", limit=2.0)
    site = copy_site(root, work / "build")
    page = site / "docs" / first_page_with_a_block(root)
    for i in range(repeat):
        page.write_text(page.read_text() + f"\nOne more sentence, edit {i}.\n")
        fig.samples.append(_timed([_bin("mkdocs"), "build", "--strict", "-q"], site)[0])
    return fig


def this_target(root: Path) -> str:
    """The auto target this machine is, by the recorder's own choice (a cheap look: no check
    runs, so torch is not imported)."""
    return choose(Store(root).targets, AUTO, needed=lambda name: False).chosen[0]


def record_nothing_stale(root: Path, repeat: int) -> Figure:
    fig = Figure("`record_runs.py` with nothing stale", "≤ 0.5 s, torch never imported", limit=0.5)
    target = this_target(root)
    cmd = [sys.executable, str(root / "scripts" / "record_runs.py"), "--target", target]
    for _ in range(repeat):
        elapsed, done = _timed(cmd, root)
        if "nothing to record" not in done.stderr:
            raise RuntimeError(f"recordings are not all fresh; run the recorder first:\n{done.stderr}")
        fig.samples.append(elapsed)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from recorded.cli import main; "
        "main(['--target', sys.argv[3]], root=sys.argv[2]); print('torch' in sys.modules)"
    )
    _, done = _timed([sys.executable, "-c", probe, str(root / "src"), str(root), target], root)
    imported = done.stdout.strip().splitlines()[-1] == "True"
    fig.notes.append(f"torch imported: {imported}")
    if imported:
        fig.limit = -1.0  # a failed condition fails the figure, whatever the time
    return fig


def quickest_snippet(root: Path) -> str:
    """The snippet whose recording on this machine's target ran the shortest: its own run
    matters least here."""
    store, target = Store(root), this_target(root)
    recorded = [
        (rec.duration_s, s.name)
        for s in discover(store.snippets_dir, store.targets)
        if s.runs_on(store.targets.get(target)) and (rec := store.read(s.name, target))
    ]
    if not recorded:
        raise RuntimeError(f"no snippet has a {target} recording; run the recorder first")
    return min(recorded)[1]


def record_one_edit(root: Path, repeat: int, work: Path) -> Figure:
    fig = Figure(
        "`record_runs.py` after editing one snippet: time beyond the snippet's own run",
        "≤ 0.5 s; nothing else runs",
        limit=0.5,
    )
    site = copy_site(root, work / "record")
    name, target = quickest_snippet(root), this_target(root)
    snippet = site / "snippets" / name
    overheads = []
    for i in range(repeat):
        snippet.write_text(snippet.read_text() + f"pass  # edit {i}\n")  # code: a comment keeps it fresh
        elapsed, done = _timed([sys.executable, "scripts/record_runs.py", "--target", target], site)
        ran = re.findall(r"^\[\d+/(\d+)\] (\S+)", done.stderr, re.MULTILINE)
        if ran != [("1", name)]:
            raise RuntimeError(f"expected only {name} to run, got {ran}")
        rec = Store(site).read(name, target)
        if rec is None:
            raise RuntimeError(f"{name} left no recording on {target}")
        own = rec.duration_s
        fig.samples.append(elapsed)
        overheads.append(elapsed - own)
    fig.value = statistics.median(overheads)
    fig.spread = f"{min(overheads):.2f}–{max(overheads):.2f} s (n={repeat})"
    fig.notes.append(
        f"overhead beyond the run itself, median: {fig.value:.2f} s "
        f"(spread {min(overheads):.2f}–{max(overheads):.2f} s)"
    )
    return fig


def snippet_seconds(root: Path) -> float:
    store, target = Store(root), this_target(root)
    total = 0.0
    for s in discover(store.snippets_dir, store.targets):
        status = store.status(s, target)
        state, rec = status.state, status.recording
        if state is State.FRESH and rec is not None:
            total += rec.duration_s
    return total


def _pytest_seconds(root: Path, marks: str) -> float:
    """One run of the tests selected by ``marks``, on every core as `make test` runs them."""
    argv = ["-n", "auto", "--dist", "loadfile", "-q", "-p", "no:cacheprovider", "-m", marks]
    return _timed([sys.executable, "-m", "pytest", *argv], root)[0]


def test_suite(root: Path, repeat: int) -> list[Figure]:
    own = snippet_seconds(root)
    core = Figure(
        "test suite, without the build, browser and notebook tests",
        f"≤ 1.3 × the snippets' own run times ({own:.0f} s) = {1.3 * own:.0f} s",
        limit=1.3 * own,
    )
    rest = Figure("build, browser and notebook tests (reported apart)", "-")
    for _ in range(repeat):
        core.samples.append(_pytest_seconds(root, "not build and not browser and not slow"))
        rest.samples.append(_pytest_seconds(root, "build or browser or slow"))
    core.notes.append(f"sum of the snippets' own CPU run times, from their recordings: {own:.1f} s")
    return [core, rest]


PEER_FENCE = """  - pymdownx.superfences:
      custom_fences:
        - name: sh
          class: sh
          validator: !!python/name:markdown_exec.validator
          format: !!python/name:markdown_exec.formatter
"""


def peer_page(text: str, snippets: Path) -> str:
    """A page whose blocks, as the site reads them (blocks.read), run their snippet at build time."""
    lines = text.split("\n")
    for found in reversed(blocks.read(lines).blocks):  # last first, so earlier line numbers hold
        if found.problem is None:
            run = f"{sys.executable} {snippets / found.argument} 2>&1 || true"
            lines[found.line - 1 : found.end] = ['```sh exec="1"', run, "```"]
    return "\n".join(lines)


def peer_site(root: Path, dst: Path) -> Path:
    """The same pages built by a peer that runs the code at build time (markdown-exec)."""
    site = copy_site(root, dst)
    for page in (site / "docs").glob("*.md"):
        page.write_text(peer_page(page.read_text(), site / "snippets"))
    config = site / "mkdocs.yml"
    config.write_text(config.read_text().replace("  - pymdownx.superfences\n", PEER_FENCE))
    return site


def peer_ratio(root: Path, repeat: int, work: Path, ours: Figure) -> Figure:
    peer = peer_site(root, work / "peer")
    page = peer / "docs" / first_page_with_a_block(root)
    times = []
    for i in range(repeat):
        page.write_text(page.read_text() + f"\nOne more sentence, edit {i}.\n")
        times.append(_timed([_bin("mkdocs"), "build", "-q"], peer)[0])
    fig = Figure(
        "ours ÷ a peer that executes the snippets at build time (markdown-exec), prose-only edit",
        "≤ 1/20 = 0.05",
        samples=times,
        limit=0.05,
        unit="",
    )
    fig.value = ours.median / statistics.median(times)
    fig.spread = f"{min(ours.samples) / max(times):.3f}–{max(ours.samples) / min(times):.3f} (n={repeat})"
    fig.notes.append(
        f"peer build, median: {statistics.median(times):.1f} s "
        f"(spread {min(times):.1f}–{max(times):.1f} s); ours {ours.median:.2f} s"
    )
    return fig


# -- Lighthouse: the reader's side ---------------------------------------------------------

#: The flags the browser tests give Chromium (tests/test_browser.py), headless and quiet.
CHROME_FLAGS = (
    "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync"
)
LIGHTHOUSE_FLOOR = 0.90


def lighthouse_binary(root: Path) -> str | None:
    """The project's own install (.cache/npm, as `make bench` and .ci/run make it), else PATH."""
    local = root / ".cache" / "npm" / "node_modules" / ".bin" / "lighthouse"
    return str(local) if local.exists() else shutil.which("lighthouse")


def lighthouse_run(binary: str, chromium: str, url: str, out: Path) -> dict:
    """One default (mobile) Lighthouse run of the performance category: its score and metrics."""
    _timed(
        [
            binary,
            url,
            "--quiet",
            "--output=json",
            f"--output-path={out}",
            "--only-categories=performance",
            f"--chrome-flags={CHROME_FLAGS}",
        ],
        out.parent,
        timeout=300,
        env={**os.environ, "CHROME_PATH": chromium},
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    audits = report["audits"]
    return {
        "score": report["categories"]["performance"]["score"],
        "version": report.get("lighthouseVersion", "?"),
        **{
            key: audits[key]["numericValue"]
            for key in (
                "first-contentful-paint",
                "largest-contentful-paint",
                "total-blocking-time",
                "speed-index",
                "cumulative-layout-shift",
            )
        },
    }


def lighthouse_scores(root: Path, runs: int, work: Path, compress: bool = True) -> list[Figure]:
    budget = f"≥ {LIGHTHOUSE_FLOOR:.2f}"
    binary, chromium = lighthouse_binary(root), shutil.which("chromium")
    why = (
        "lighthouse is not installed (`npm install --prefix .cache/npm lighthouse`; `make bench` does it)"
        if binary is None
        else "Chromium is not installed (apt-get install chromium)"
        if chromium is None
        else None
    )
    if why or binary is None or chromium is None:
        return [Figure("Lighthouse performance (mobile), every page", budget, skipped=why)]
    site = work / "lighthouse-site"
    _timed(
        [_bin("mkdocs"), "build", "--strict", "-q", "-d", str(site)],
        root,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    figures = []
    with serve_site(site, compress=compress) as url:
        for page in site_pages(site):
            fig = Figure(
                f"Lighthouse performance (mobile): /{page}",
                budget,
                limit=LIGHTHOUSE_FLOOR,
                unit="",
                at_least=True,
            )
            results = [
                lighthouse_run(binary, chromium, url + page, work / f"lighthouse-{i}.json")
                for i in range(runs)
            ]
            fig.samples = [r["score"] for r in results]
            fig.spread = f"{min(fig.samples):.2f}–{max(fig.samples):.2f} (n={runs})"
            middle = sorted(results, key=lambda r: r["score"])[len(results) // 2]
            fig.notes.append(
                "median run: FCP {:.1f} s, LCP {:.1f} s, TBT {:.0f} ms, SI {:.1f} s, CLS {:.3f} (Lighthouse {})".format(
                    middle["first-contentful-paint"] / 1000,
                    middle["largest-contentful-paint"] / 1000,
                    middle["total-blocking-time"],
                    middle["speed-index"] / 1000,
                    middle["cumulative-layout-shift"],
                    middle["version"],
                )
            )
            figures.append(fig)
    lowest = min(figures, key=lambda f: f.median)
    low = Figure(
        "Lighthouse performance (mobile): the lowest page",
        budget,
        limit=LIGHTHOUSE_FLOOR,
        unit="",
        at_least=True,
        samples=lowest.samples,
        spread=f"{lowest.name.split(': ', 1)[1]}",
    )
    low.notes.append(
        "served "
        + (
            "gzip-compressed, as GitHub Pages serves the published site"
            if compress
            else "uncompressed (--lighthouse-plain)"
        )
    )
    return figures + [low]


# -- The reading report: what a reader meets on the lesson pages ---------------------------


def reading_figures(root: Path, work: Path, before: str | None = None) -> list[Figure]:
    """scripts/reading.py's figures as rows: counts, measured once (no median, no spread);
    the spread column holds what the count is about, and its count at ``before``."""
    try:
        now = reading.rows(reading.measure(root, work / "reading"))
        then = reading.rows(reading.measure_commit(root, before, work)) if before else []
    except reading.Unavailable as exc:
        return [Figure("reading report (scripts/reading.py)", "see docs/contributing.md", skipped=str(exc))]
    old = {r.name: r for r in then}
    figures = []
    for row in now:
        about = [row.detail] if row.detail else []
        if row.name in old:
            about.append(f"{old[row.name].value:,} at {before}")
        spread = "; ".join(about) or "a count"
        figures.append(
            Figure(f"reading: {row.name}", row.goal, value=row.value, limit=row.limit, unit="", spread=spread)
        )
    figures[0].notes.append(
        "this row and every reading row after it is a count in Chromium (scripts/reading.py), the "
        "same on every run of one site: measured once, with no median or spread"
    )
    return figures


def main(argv: list[str] | None = None, root: Path | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="bench.py", description=__doc__)
    p.add_argument("--repeat", type=int, default=5, help="runs per figure (default 5)")
    p.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["build", "record", "suite", "peer", "lighthouse", "reading"],
        help="figures to leave out",
    )
    p.add_argument(
        "--lighthouse-runs",
        type=int,
        default=3,
        help="Lighthouse runs per page, the median kept (default 3; about 15 s each)",
    )
    p.add_argument(
        "--lighthouse-plain",
        action="store_true",
        help="serve the site to Lighthouse uncompressed (the default is gzip, as the host does)",
    )
    p.add_argument(
        "--reading-before",
        metavar="REF",
        help="also count the reading report at this git commit, shown beside each reading figure",
    )
    p.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    root = root or Path.cwd()
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        if "build" not in args.skip or "peer" not in args.skip:
            ours = build_after_prose_edit(root, args.repeat, work)
            figures.append(ours)
        if "record" not in args.skip:
            figures += [record_nothing_stale(root, args.repeat), record_one_edit(root, args.repeat, work)]
        if "suite" not in args.skip:
            figures += test_suite(root, args.repeat)
        if "peer" not in args.skip:
            figures.append(peer_ratio(root, args.repeat, work, ours))
        if "lighthouse" not in args.skip:
            figures += lighthouse_scores(root, args.lighthouse_runs, work, compress=not args.lighthouse_plain)
        if "reading" not in args.skip:
            figures += reading_figures(root, work, args.reading_before)
    machine = Machine({"cpu": this_cpu(), "python": sys.version.split()[0]})
    print(
        f"Measured {time.strftime('%Y-%m-%d')} on {describe.cpu(machine)}, "
        f"Python {machine['python']}, {args.repeat} runs per figure"
        f" ({args.lighthouse_runs} per Lighthouse page).\n"
    )
    print("| figure | measured (median) | spread | budget | verdict |\n|---|---|---|---|---|")
    for f in figures:
        print(f.row())
    for f in figures:
        for note in f.notes:
            print(f"- {f.name}: {note}")
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "name": f.name,
                        "samples": f.samples,
                        "median": f.median if f.samples else None,
                        "value": f.value,
                        "budget": f.budget,
                        "ok": f.ok,
                        "notes": f.notes,
                        "skipped": f.skipped,
                    }
                    for f in figures
                ],
                indent=2,
            )
        )
    return 0 if all(f.ok is not False for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main(root=ROOT))
