#!/usr/bin/env python3
"""Measure the project's speed goals: `make bench` (`make bench BEFORE=REF` adds a column
for that commit). Each figure is printed against its goal, as a median of at least three
runs on this machine, and the output ends with the command that reproduces it.

Timed tests would be flaky on shared machines, so these figures live here. This is site
tooling (an HTTP server, Lighthouse, copies of the site), so it lives beside the site's
scripts, not in the engine (src/recorded/).

- **Build**: `mkdocs build --strict` of the whole site, whole process, after a prose edit,
  with the caches a contributor's tree has after one build (.cache/: the notebook page and
  the compiled templates).
- **Preview**: `make serve`'s own command; a line appended to a page, timed until the
  served page shows it.
- **Recorder**: with nothing stale, after editing one snippet (beyond its own run), and what
  the sandbox adds to a run.
- **Recording**: every snippet on every kind this machine is, its fresh runs included, once
  (it takes minutes), against one run of each at --before; and how often each verdict held.
- **Suite**: the whole `make test` suite (pytest on every core), against the snippets' own
  run times from this machine's recordings: it runs each of them once, live.
- **Peer**: the same build against markdown-exec's, which runs the code at build time.
- **Pages**: Lighthouse on every page of the built site served gzip-compressed as the host
  serves it, its default mobile run (simulated slow 4G, a 4x slower CPU): performance, and
  accessibility, best practices and SEO. Lighthouse comes from npm (`make bench` installs
  it into .cache/npm); without it, or without Chromium, those rows say so.
- **Reading**: scripts/reading.py's counts of what a reader meets on the lesson pages.
- **Engine**: the engine's lines, its longest module and its longest function, beside their goals.

With --before REF, the build, preview, suite, page and reading figures are measured on
that commit too (a `git archive` of it, with this checkout's packages), in a column of
their own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The engine, importable without installing the project, as for scripts/record_runs.py.
sys.path.insert(0, str(ROOT / "src"))

import reading  # noqa: E402 (beside this script)
from site_tools import copy_site as _copy_site  # noqa: E402 (beside this script)
from site_tools import serve_site, site_pages  # noqa: E402

from recorded.model import describe, lines  # noqa: E402
from recorded.model.machines import Machine, this_cpu  # noqa: E402
from recorded.model.snippets import discover  # noqa: E402
from recorded.model.store import State, Store  # noqa: E402
from recorded.pages import blocks  # noqa: E402
from recorded.recorder import sandbox  # noqa: E402
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
    before: Figure | None = None  # the same figure at --before REF

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def figure(self) -> float | None:
        if self.skipped or (self.value is None and not self.samples):
            return None
        return self.value if self.value is not None else self.median

    @property
    def ok(self) -> bool | None:
        figure = self.figure
        if self.limit is None or figure is None:
            return None
        return figure >= self.limit if self.at_least else figure <= self.limit

    def shown(self) -> str:
        figure = self.figure
        if figure is None:
            return f"skipped: {self.skipped}" if self.skipped else "-"
        return (f"{figure:,}" if isinstance(figure, int) else f"{figure:.3g}") + self.unit

    def row(self, with_before: bool) -> str:
        spread = self.spread or (
            f"{min(self.samples):.2f}–{max(self.samples):.2f} (n={len(self.samples)})"
            if self.samples
            else "-"
        )
        verdict = {True: "within", False: "UNDER" if self.at_least else "OVER", None: "-"}[self.ok]
        before = f" {self.before.shown() if self.before else '-'} |" if with_before else ""
        return f"| {self.name} | {self.budget} |{before} {self.shown()} | {spread} | {verdict} |"


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


@dataclass(frozen=True)
class Tree:
    """A project to measure: this checkout, or a commit unpacked beside it (its own engine
    first on the path, this checkout's packages)."""

    root: Path
    label: str = "now"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(self.root / "src")}


def unpack(ref: str, dst: Path) -> Tree:
    """The commit ``ref``, checked out in a clone of this repository at ``dst`` (this one is
    not touched), with what a working checkout has beside its files: the browser tests'
    axe-core and Lighthouse (.cache/npm), the tests' torch.compile cache, the seed lesson."""
    for cmd in (
        ["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(dst)],
        ["git", "-C", str(dst), "checkout", "--quiet", "--detach", ref],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"--before {ref}: {' '.join(cmd[:3])} failed: {done.stderr.strip()}")
    (dst / ".cache").mkdir(exist_ok=True)
    if (ROOT / ".cache" / "npm").is_dir():
        (dst / ".cache" / "npm").symlink_to(ROOT / ".cache" / "npm")
    cache = ROOT / ".pytest_cache" / "compile-cache"
    if cache.is_dir():
        shutil.copytree(cache, dst / ".pytest_cache" / "compile-cache")
    seed = ROOT.parent / "shared"
    if seed.is_dir() and not (dst.parent / "shared").exists():
        (dst.parent / "shared").symlink_to(seed)
    return Tree(dst, ref)


def first_page_with_a_block(root: Path) -> str:
    """A page that shows recordings, under docs/: the one a prose edit is timed on."""
    for page in sorted((root / "docs").rglob("*.md")):
        if blocks.headers(page.read_text(encoding="utf-8").splitlines()):
            return page.relative_to(root / "docs").as_posix()
    raise RuntimeError("no page under docs/ shows a recording")


def build_after_prose_edit(tree: Tree, repeat: int, work: Path) -> Figure:
    fig = Figure("`mkdocs build --strict`, the whole site, after a prose edit", "≤ 1.0 s", limit=1.0)
    site = copy_site(tree.root, work / f"build-{tree.label}")
    page = site / "docs" / first_page_with_a_block(tree.root)
    build = [_bin("mkdocs"), "build", "--strict", "-q"]
    _timed(build, site, env=tree.env)  # fills .cache/, as any earlier build in a checkout has
    for i in range(repeat):
        page.write_text(page.read_text() + f"\nOne more sentence, edit {i}.\n")
        fig.samples.append(_timed(build, site, env=tree.env)[0])
    fig.notes.append("each after one untimed build, whose caches (.cache/) a working checkout has")
    return fig


def serve_command(root: Path, port: int) -> list[str]:
    """`make serve`'s own command line, from the Makefile, on ``port``."""
    makefile = (root / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^serve:.*\n\t(?P<cmd>.*mkdocs serve.*)$", makefile, re.MULTILINE)
    if recipe is None:
        raise RuntimeError(f"{root / 'Makefile'}: no `serve:` recipe running mkdocs serve")
    words = recipe.group("cmd").replace("$(BIN)/", "").split()
    if "--dev-addr" in words:
        i = words.index("--dev-addr")
        del words[i : i + 2]
    words = [w for w in words if not w.startswith("--dev-addr=")]
    return [_bin(words[0]), *words[1:], "--dev-addr", f"127.0.0.1:{port}"]


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def preview_after_prose_edit(tree: Tree, repeat: int, work: Path) -> Figure:
    fig = Figure("`make serve`: a saved prose edit, until the served page shows it", "≤ 0.5 s", limit=0.5)
    site = copy_site(tree.root, work / f"preview-{tree.label}")
    name = first_page_with_a_block(tree.root)
    page = site / "docs" / name
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/{name.removesuffix('.md')}/"
    server = subprocess.Popen(
        serve_command(tree.root, port),
        cwd=site,
        env=tree.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while "</html>" not in _get(url):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"`make serve` in {site} did not serve {url}")
            time.sleep(0.2)
        text = page.read_text()
        for i in range(repeat + 1):
            time.sleep(1.0)  # the previous rebuild done and quiet
            marker = f"Edit {i} at {time.time_ns()}"
            start = time.perf_counter()
            page.write_text(f"{text}\n{marker}.\n")
            while marker not in _get(url):
                if time.perf_counter() - start > 60:
                    raise RuntimeError(f"{url} did not show an edit within a minute")
                time.sleep(0.005)
            if i:  # the first edit after start-up is not timed: the server's first rebuild
                fig.samples.append(time.perf_counter() - start)
    finally:
        # SIGTERM, not Ctrl-C's SIGINT: a bench started in the background inherits SIGINT
        # ignored, and so does the server it starts.
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    fig.notes.append(
        f"from writing the page to the served {url.split('/', 3)[3]} showing the edit, polled every 5 ms"
    )
    return fig


def this_target(root: Path) -> str:
    """The auto target this machine is, by the recorder's own choice (a cheap look: no check
    runs, so torch is not imported)."""
    return choose(Store(root).targets, AUTO, needed=lambda target: False).chosen[0].name


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
        if s.runs_on(store.targets[target]) and (rec := store.read(s.name, target))
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


def sandbox_cost(root: Path, repeat: int, work: Path) -> Figure:
    """What the sandbox adds to one run of the quickest snippet: the same command started in
    bubblewrap and without it, taking turns, in the same empty folder."""
    fig = Figure("a snippet's run in the sandbox, beyond the same run without it", "≤ 0.1 s", limit=0.1)
    why = sandbox.why_not()
    if why is not None:
        fig.skipped = why
        return fig
    name = quickest_snippet(root)
    folder = work / "sandbox-cost"
    folder.mkdir()
    plain = [sys.executable, str(root / "snippets" / name)]
    contained = sandbox.command(plain, folder)
    times: dict[str, list[float]] = {"plain": [], "sandboxed": []}
    for _ in range(repeat):
        for kind, cmd in (("plain", plain), ("sandboxed", contained)):
            times[kind].append(_timed(cmd, folder)[0])
    cost = [s - p for s, p in zip(times["sandboxed"], times["plain"], strict=True)]
    fig.samples = cost
    fig.notes.append(
        f"{name}: {statistics.median(times['plain']):.3f} s without the sandbox, "
        f"{statistics.median(times['sandboxed']):.3f} s in it (medians of {repeat})"
    )
    return fig


#: Recording every kind this machine is, every run of it, against one run of each at --before.
BUDGET_FACTOR = 1.5


def record_everything(tree: Tree, work: Path) -> tuple[float, Path]:
    """Seconds to record every snippet on every kind this machine is, as `make record` would
    with nothing recorded yet (into a scratch folder), and that folder."""
    out = work / f"record-{tree.label}"
    cmd = [sys.executable, "scripts/record_runs.py", "--force", "--out", str(out)]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree.root, env=tree.env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"recording at {tree.label} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start, out


def recording_budget(trees: list[Tree], work: Path) -> list[Figure]:
    """The recording budget (once each: minutes of runs, on a quiet machine) and, from the
    recordings it made, how often each verdict held in the fresh runs of each snippet."""
    fig = Figure(
        "recording every kind this machine is, its fresh runs included",
        f"≤ {BUDGET_FACTOR:g} × one run of each snippet at --before",
    )
    now, out = record_everything(trees[0], work)
    fig.samples = [now]
    if len(trees) > 1:
        then, _ = record_everything(trees[1], work)
        fig.before = Figure(fig.name, fig.budget, samples=[then])
        fig.limit = BUDGET_FACTOR * then
        fig.notes.append(f"{now:.0f} s against {then:.0f} s at {trees[1].label}: {now / then:.2f}x")
    else:
        fig.skipped = None
        fig.notes.append("no --before commit: the budget's other side is not measured")
    agreement = Figure("verdicts that held in every fresh run, this machine", "all")
    held = total = 0
    store = Store(trees[0].root, out)
    for path in sorted(out.rglob("*.json")):
        rec = store.load(path)
        for _, line, nth in lines.scan(rec.stdout):
            if line.kind == "verdict" and line.value in lines.TIMING_VERDICTS:
                note = lines.runs_note(rec.outputs, line.value, line.label, nth)
                total += 1
                held += note.startswith(f"in {len(rec.outputs)} of")
                agreement.notes.append(f"{rec.snippet} on {rec.target}: {line.label}: {line.value} {note}")
    agreement.value, agreement.unit, agreement.spread = held, f" of {total}", "-"
    return [fig, agreement]


def snippet_seconds(root: Path) -> float:
    """What this machine's snippets take to run once each, from their recordings (a timing
    snippet's first run: the suite runs each snippet once)."""
    store, target = Store(root), this_target(root)
    total = 0.0
    for s in discover(store.snippets_dir, store.targets):
        status = store.standing(s, store.targets[target])
        state, rec = status.state, status.recording
        if state is State.FRESH and rec is not None:
            total += rec.duration_s
    return total


#: The suite's goal, as a multiple of the snippets' own run time.
SUITE_FACTOR = 2.0


def test_suite(tree: Tree, repeat: int, own: float) -> Figure:
    fig = Figure(
        "the whole test suite, as `make test` runs it (pytest on every core)",
        f"≤ {SUITE_FACTOR:g} × the snippets' own run time ({own:.0f} s) = {SUITE_FACTOR * own:.0f} s",
        limit=SUITE_FACTOR * own,
    )
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-n",
        "auto",
        "--dist",
        "loadfile",
        "-q",
        "-p",
        "no:cacheprovider",
    ]
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(
            argv, cwd=tree.root, env=tree.env, capture_output=True, text=True, timeout=3600, check=False
        )
        fig.samples.append(time.perf_counter() - start)
        if done.returncode != 0:  # a time, but not of a passing suite: said, and failed
            summary = (done.stdout.strip().splitlines() or ["no output"])[-1]
            fig.notes.append(f"at {tree.label} the suite did not pass: {summary}")
            fig.limit = -1.0
    fig.notes.append(f"the snippets' own run time: {own:.1f} s, the sum of this machine's recorded runs")
    return fig


PEER_FENCE = """  - pymdownx.superfences:
      custom_fences:
        - name: sh
          class: sh
          validator: !!python/name:markdown_exec.validator
          format: !!python/name:markdown_exec.formatter
"""


def peer_page(text: str, snippets: Path) -> str:
    """A page whose blocks, as the site reads them (blocks.read), run their snippet at build time."""
    rows = text.split("\n")
    for found in reversed(blocks.read(rows).blocks):  # last first, so earlier line numbers hold
        if found.problem is None:
            run = f"{sys.executable} {snippets / found.argument} 2>&1 || true"
            rows[found.line - 1 : found.end] = ['```sh exec="1"', run, "```"]
    return "\n".join(rows)


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

#: The flags the browser tests give Chromium (tests/project/test_browser.py), headless and quiet.
CHROME_FLAGS = (
    "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync"
)
LIGHTHOUSE_FLOOR = 0.95
#: Lighthouse's other categories: each at 1.00 on every page.
OTHER_CATEGORIES = ("accessibility", "best-practices", "seo")


def lighthouse_binary(root: Path) -> str | None:
    """The project's own install (.cache/npm, as `make bench` and .ci/run make it), else PATH."""
    local = root / ".cache" / "npm" / "node_modules" / ".bin" / "lighthouse"
    return str(local) if local.exists() else shutil.which("lighthouse")


def lighthouse_run(binary: str, chromium: str, url: str, out: Path) -> dict:
    """One default (mobile) Lighthouse run: every category's score, and performance's metrics."""
    _timed(
        [
            binary,
            url,
            "--quiet",
            "--output=json",
            f"--output-path={out}",
            f"--only-categories=performance,{','.join(OTHER_CATEGORIES)}",
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
        "others": {c: report["categories"][c]["score"] for c in OTHER_CATEGORIES},
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


def lighthouse_scores(tree: Tree, runs: int, work: Path, compress: bool = True) -> list[Figure]:
    budget = f"≥ {LIGHTHOUSE_FLOOR:.2f}"
    binary, chromium = lighthouse_binary(ROOT), shutil.which("chromium")
    why = (
        "lighthouse is not installed (`npm install --prefix .cache/npm lighthouse`; `make bench` does it)"
        if binary is None
        else "Chromium is not installed (apt-get install chromium)"
        if chromium is None
        else None
    )
    if why or binary is None or chromium is None:
        return [Figure("Lighthouse performance (mobile), every page", budget, skipped=why)]
    site = work / f"lighthouse-site-{tree.label}"
    _timed([_bin("mkdocs"), "build", "--strict", "-q", "-d", str(site)], tree.root, env=tree.env)
    figures, below = [], []
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
            below += [
                (r["others"][c], f"/{page} {c}")
                for r in results
                for c in OTHER_CATEGORIES
                if r["others"][c] < 1
            ]
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
    others = Figure(
        f"Lighthouse {', '.join(OTHER_CATEGORIES)}: the lowest score on any page",
        "= 1.00",
        value=min([score for score, _ in below], default=1.0),
        limit=1.0,
        unit="",
        at_least=True,
        spread=", ".join(sorted({where for _, where in below})) or f"every page, {runs} runs each",
    )
    return figures + [low, others]


# -- The reading report: what a reader meets on the lesson pages ---------------------------


#: The engine's size goals (issue 38), and two well-kept peers' sizes for scale.
ENGINE_LINES, MODULE_LINES, FUNCTION_LINES = 6500, 350, 60
PEERS = "Sybil 2,523 lines, markdown-exec 2,745, none with a module over 323"


def engine_figures(tree: Tree) -> list[Figure]:
    """The engine's size (src/recorded): its lines, its longest module and its longest
    function, each against its goal. Counts, the same on every run: measured once."""
    import ast

    modules = sorted((tree.root / "src" / "recorded").rglob("*.py"))
    sizes, functions = {}, []
    for path in modules:
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(tree.root / "src").as_posix()
        sizes[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno:
                functions.append((node.end_lineno - node.lineno + 1, f"{name}:{node.name}"))
    biggest = max(sizes.items(), key=lambda item: item[1])
    longest = max(functions)
    over = sum(1 for n, _ in functions if n > FUNCTION_LINES)
    rows = [
        ("lines in src/recorded", ENGINE_LINES, sum(sizes.values()), f"{len(modules)} modules"),
        (
            "longest module",
            MODULE_LINES,
            biggest[1],
            f"{biggest[0]}; {sum(n > MODULE_LINES for n in sizes.values())} over",
        ),
        ("longest function", FUNCTION_LINES, longest[0], f"{longest[1]}; {over} over"),
    ]
    figures = [
        Figure(f"engine: {name}", f"≤ {limit:,}", value=value, limit=limit, unit="", spread=detail)
        for name, limit, value, detail in rows
    ]
    figures[0].notes.append(f"engine size, for scale: {PEERS}")
    return figures


def reading_figures(trees: list[Tree], work: Path) -> list[Figure]:
    """scripts/reading.py's figures as rows: counts, measured once (no median, no spread),
    each with its count in the --before tree, when there is one."""
    try:
        counted = [
            reading.rows(reading.measure(tree.root, work / f"reading-{tree.label}", source=tree.label))
            for tree in trees
        ]
    except reading.Unavailable as exc:
        return [Figure("reading report (scripts/reading.py)", "see docs/contributing.md", skipped=str(exc))]
    now, then = counted[0], counted[1] if len(counted) > 1 else []
    old = {r.name: r for r in then}
    figures = []
    for row in now:
        fig = Figure(
            f"reading: {row.name}",
            row.goal,
            value=row.value,
            limit=row.limit,
            unit="",
            spread=row.detail or "a count",
        )
        if row.name in old:
            fig.before = Figure(fig.name, row.goal, value=old[row.name].value, unit="")
        figures.append(fig)
    figures[0].notes.append(
        "this row and every reading row after it is a count in Chromium (scripts/reading.py), the "
        "same on every run of one site: measured once, with no median or spread"
    )
    return figures


FIGURES = ("build", "preview", "record", "recording", "suite", "peer", "lighthouse", "reading", "engine")


def main(argv: list[str] | None = None, root: Path | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="bench.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--repeat", type=int, default=3, help="runs per timed figure, the median kept (default 3, at least 3)"
    )
    p.add_argument("--skip", nargs="*", default=[], choices=FIGURES, help="figures to leave out")
    p.add_argument(
        "--before",
        metavar="REF",
        help="also measure the build, preview, suite, page and reading figures at this commit",
    )
    p.add_argument(
        "--lighthouse-runs", type=int, default=3, help="Lighthouse runs per page, the median kept (default 3)"
    )
    p.add_argument(
        "--lighthouse-plain",
        action="store_true",
        help="serve the site to Lighthouse uncompressed (the default is gzip, as the host does)",
    )
    p.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    if args.repeat < 3 or args.lighthouse_runs < 3:
        p.error("a median needs at least 3 runs: --repeat and --lighthouse-runs must be 3 or more")
    root = root or Path.cwd()
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        trees = [Tree(root)]
        if args.before:
            trees.append(unpack(args.before, work / "before"))

        def each(measure) -> list[Figure]:
            """``measure(tree)`` on this checkout, with the --before commit's figures beside."""
            now = measure(trees[0])
            now = now if isinstance(now, list) else [now]
            if len(trees) > 1:
                then = measure(trees[1])
                then = {f.name: f for f in (then if isinstance(then, list) else [then])}
                for fig in now:
                    fig.before = then.get(fig.name)
            return now

        ours = None
        if "build" not in args.skip or "peer" not in args.skip:
            built = each(lambda tree: build_after_prose_edit(tree, args.repeat, work))
            ours = built[0]
            figures += built
        if "preview" not in args.skip:
            figures += each(lambda tree: preview_after_prose_edit(tree, args.repeat, work))
        if "record" not in args.skip:
            figures += [
                record_nothing_stale(root, args.repeat),
                record_one_edit(root, args.repeat, work),
                sandbox_cost(root, args.repeat, work),
            ]
        if "recording" not in args.skip:
            figures += recording_budget(trees, work)
        if "suite" not in args.skip:
            own = snippet_seconds(root)
            figures += each(lambda tree: test_suite(tree, args.repeat, own))
        if "peer" not in args.skip and ours is not None:
            figures.append(peer_ratio(root, args.repeat, work, ours))
        if "lighthouse" not in args.skip:
            figures += each(
                lambda tree: lighthouse_scores(tree, args.lighthouse_runs, work, not args.lighthouse_plain)
            )
        if "reading" not in args.skip:
            figures += reading_figures(trees, work)
        if "engine" not in args.skip:
            figures += each(engine_figures)
    machine = Machine({"cpu": this_cpu(), "python": sys.version.split()[0]})
    print(
        f"Measured {time.strftime('%Y-%m-%d')} on {describe.cpu(machine)}, Python {machine['python']}: "
        f"medians of {args.repeat} runs ({args.lighthouse_runs} per Lighthouse page)"
        + (f", beside commit {args.before}" if args.before else "")
        + ".\n"
    )
    before = f" {args.before} |" if args.before else ""
    print(f"| figure | goal |{before} now | spread (now) | verdict |")
    print("|---|---|" + ("---|" if args.before else "") + "---|---|---|")
    for f in figures:
        print(f.row(bool(args.before)))
    for f in figures:
        for note in f.notes:
            print(f"- {f.name}: {note}")
    shown = ["make bench"] + ([f"BEFORE={args.before}"] if args.before else [])
    flags = [f"--repeat {args.repeat}"] + ([f"--skip {' '.join(args.skip)}"] if args.skip else [])
    print(
        f"\nReproduce: `{' '.join(shown)}`, or `.venv/bin/python scripts/bench.py {' '.join(flags)}"
        + (f" --before {args.before}" if args.before else "")
        + "` (on a quiet machine: the figures are times on this one)."
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "name": f.name,
                        "samples": f.samples,
                        "figure": f.figure,
                        "before": f.before.figure if f.before else None,
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
