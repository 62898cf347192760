#!/usr/bin/env python3
"""What a reader meets on the lesson pages, counted in Chromium:
`python scripts/reading.py [--before REF] [--json FILE]`.

Builds the site (`mkdocs build --strict`), serves it on 127.0.0.1 and opens each reading
page (each lesson's first page and its pages that show a recording) in a fresh context at
1280 x 900, then at 390 px. It counts what shows without a click (prose words, code lines,
the words a recorded block adds around code and output, examples opening with no output),
the recorder commands in the text, hidden tabs too, and the rows tab labels take on the
phone. Counts, not timings: one site always gives the same figures, so nothing is repeated.
--before REF also counts the site at that commit, built with its own engine. Exits 1 when
a figure is over its goal, 2 when it cannot measure (no Chromium or Playwright, a bad REF).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # the engine, without installing the project

from site_tools import serve_site  # noqa: E402 (beside this script)

from recorded.config import lessons  # noqa: E402
from recorded.pages import blocks  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize  # imported where it runs: it may be missing

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CHROMIUM_ARGS += ["--no-first-run", "--disable-component-update", "--disable-sync"]
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}
COMMANDS = ("record_runs.py", "python -m recorded", "--target", "record it with")

# One page as it first shows, at the desktop viewport; `markers` are COMMANDS.
# shown(el, skip, sep) is the text a reader sees under el: an element that checkVisibility()
# rejects (a hidden tab panel) or that skip() names is left out, and so is all of a closed
# <details> but its <summary>; a block element is set apart by sep (a space between words, a
# line break in code). A region of code (a <details> in it) adds its summary as one line. A word is a whitespace-separated token holding a letter or a digit. In a recorded
# block, the outputs are its `language-text` blocks and every other <pre> is its code.
MEASURE_PAGE = r"""markers => {
  const article = document.querySelector('article.md-content__inner') ?? document.querySelector('article');
  const visible = el => el.checkVisibility({visibilityProperty: true});
  const inClosedDetails = el => [...ancestors(el)].some(
    d => d.tagName === 'DETAILS' && !d.open && !d.querySelector(':scope > summary')?.contains(el));
  function* ancestors(el) { for (let a = el.parentElement; a; a = a.parentElement) yield a; }
  const seen = el => visible(el) && !inClosedDetails(el);
  const shown = (root, skip, sep) => {
    let text = '';
    const walk = node => {
      if (node.nodeType === Node.TEXT_NODE) { text += node.data; return; }
      if (node.nodeType !== Node.ELEMENT_NODE || skip(node) || !visible(node)) return;
      const block = !getComputedStyle(node).display.startsWith('inline');
      if (block && text && !text.endsWith(sep)) text += sep;
      const closed = node.tagName === 'DETAILS' && !node.open;
      for (const child of node.childNodes) if (!closed || child.tagName === 'SUMMARY') walk(child);
      if (block && text && !text.endsWith(sep)) text += sep;
    };
    if (seen(root)) walk(root);
    return text;
  };
  const words = text => text.split(/\s+/).filter(w => /[\p{L}\p{N}]/u.test(w)).length;
  const lines = pres => pres.reduce((n, pre) => {
    const text = shown(pre, () => false, '\n').replace(/\n+$/, '');
    return n + (text ? text.split('\n').length : 0);
  }, 0);
  const isOutput = pre => pre.closest('.language-text') !== null;
  const pres = root => [...root.querySelectorAll('pre')];
  // Recorder commands, hidden tabs included: all the text (as textContent has it), block by
  // block (p, li, td...); a block holds as many commands as its most frequent marker occurs
  // in it, so "record it with python scripts/record_runs.py --target x" is one command.
  const commands = () => {
    const said = new Map(), nodes = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
    for (let n; (n = nodes.nextNode());) {
      const block = n.parentElement.closest('p, li, dt, dd, td, th, pre, summary, h1, h2, h3, h4, div');
      said.set(block ?? article, (said.get(block ?? article) ?? '') + n.data);
    }
    let all = 0, shownToo = 0;
    for (const [block, text] of said) {
      const most = Math.max(...markers.map(marker => text.split(marker).length - 1));
      all += most;
      if (seen(block)) shownToo += most;
    }
    return {recorder_commands: all, recorder_commands_shown: shownToo};
  };
  return {
    prose_words: words(shown(article, el => el.matches('pre, .headerlink, div.recorded'), ' ')),
    prose_code_lines: lines(pres(article).filter(pre => !pre.closest('div.recorded'))),
    ...commands(),
    examples: [...article.querySelectorAll('div.recorded')].map((ex, i) => ({
      id: ex.id || `example ${i + 1}`,
      // A region's summary is one line of code, folded or open.
      code_lines: lines(pres(ex).filter(pre => !isOutput(pre)))
        + [...ex.querySelectorAll('details.recorded-region > summary')].filter(seen).length,
      output_lines: lines(pres(ex).filter(pre => isOutput(pre))),
      highlighted_lines: pres(ex).filter(pre => isOutput(pre) && seen(pre))
        .reduce((n, pre) => n + pre.querySelectorAll('.hll').length, 0),
      machinery_words: words(shown(ex, el => el.tagName === 'PRE' || el.matches('.recorded-code'), ' ')),
      opens_with_output: pres(ex).some(pre => isOutput(pre) && seen(pre)),
    })),
  };
}"""

# On the phone: for each tab set, the rows its labels take (distinct offsetTop values), and
# whether the labels scroll sideways instead of wrapping (then they take one row, and the
# labels past the edge are out of sight).
TAB_ROWS = """() => [...document.querySelectorAll('article .tabbed-labels')].map(set => {
  const labels = [...set.children].filter(l => l.tagName === 'LABEL');
  const overflow = getComputedStyle(set).overflowX;
  return {rows: new Set(labels.map(l => l.offsetTop)).size,
          scrolls: /auto|scroll/.test(overflow) && set.scrollWidth > set.clientWidth + 1};
})"""


#: The reading model: prose at 200 words a minute, 5 s a line of code, 2 s a line of output.
WORDS_A_MINUTE, CODE_LINE_S, OUTPUT_LINE_S = 200, 5, 2


class Unavailable(RuntimeError):
    """Chromium or Playwright is missing: the report cannot be made here."""


@dataclass
class Example:
    id: str
    code_lines: int
    machinery_words: int
    opens_with_output: bool
    output_lines: int = 0
    highlighted_lines: int = 0


@dataclass
class Page:
    url: str  # under the site's root: "" is the home page
    prose_words: int
    prose_code_lines: int
    recorder_commands: int  # in all the page's text, hidden tabs included
    recorder_commands_shown: int  # of those, the ones shown without a click
    examples: list[Example]
    tab_rows: int = 0
    tabs_scroll: bool = False


@dataclass
class Report:
    source: str  # "the working tree" or the commit measured
    pages: list[Page] = field(default_factory=list)


@dataclass
class Row:
    name: str
    value: int
    goal: str
    limit: int | None = None  # a ceiling; None: reported, not judged
    detail: str = ""

    @property
    def ok(self) -> bool | None:
        return None if self.limit is None else self.value <= self.limit


def lesson_pages(tree: Path) -> list[list[str]]:
    """Each declared lesson's pages, in order. An older checkout (``--before``) may declare
    its lessons under the engine's earlier table name, ``[tool.record-runs]``: the report
    reads both, since it compares the site across versions."""
    tool = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8")).get("tool", {})
    if "record-runs" in tool:
        return [list(entry.get("pages", [])) for entry in tool["record-runs"].get("lessons", {}).values()]
    return [list(lesson.pages) for lesson in lessons.load(tree).values()]


def reading_pages(tree: Path) -> list[str]:
    """Each lesson's first page and its pages that show a recording, under docs/, in order."""
    chosen: list[str] = []
    for pages in lesson_pages(tree):
        for i, page in enumerate(pages):
            lines = (tree / "docs" / page).read_text(encoding="utf-8").splitlines()
            if (i == 0 or blocks.headers(lines)) and page not in chosen:
                chosen.append(page)
    return chosen


def page_url(site: Path, page: str) -> str:
    """Where a page under docs/ lies in the built site, with or without directory URLs."""
    path = PurePosixPath(page)
    folder = path.parent if path.name == "index.md" else path.parent / path.stem
    if (site / folder / "index.html").is_file():
        return "" if str(folder) == "." else f"{folder}/"
    if (site / path.with_suffix(".html")).is_file():
        return str(path.with_suffix(".html"))
    raise FileNotFoundError(f"{page} is not in the built site {site}")


def build(tree: Path, site: Path) -> None:
    """`mkdocs build --strict` of tree into site, with tree's own engine first on the path."""
    paths = [str(tree / "src"), str(tree / "scripts"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"mkdocs build failed in {tree}:\n{done.stdout}{done.stderr}")


def chromium() -> str:
    """The browser's path, or Unavailable saying what is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        raise Unavailable("Playwright is not installed (pip install playwright; make test's venv has it)")
    path = shutil.which("chromium")
    if path is None:
        raise Unavailable("Chromium is not installed (apt-get install chromium)")
    return path


def evaluate(browser: Any, url: str, viewport: ViewportSize, script: str) -> Any:
    """The script's result on the page at url, opened in a fresh context (no stored tab choice)."""
    context = browser.new_context(viewport=viewport, color_scheme="light")
    try:
        tab = context.new_page()
        tab.goto(url, wait_until="networkidle")
        return tab.evaluate(script, list(COMMANDS))
    finally:
        context.close()


def measure(tree: Path, work: Path, source: str = "the working tree") -> Report:
    """Build tree's site into work and count what a reader meets on each reading page."""
    browser_path = chromium()  # first: it says so if Playwright is missing
    from playwright.sync_api import Error, sync_playwright

    site = work / "site"
    build(tree, site)
    report = Report(source)
    with sync_playwright() as pw, serve_site(site) as base:
        try:
            browser = pw.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        except Error as exc:
            raise Unavailable(f"Chromium did not start: {str(exc).splitlines()[0]}") from None
        for page in reading_pages(tree):
            url = page_url(site, page)
            counts = evaluate(browser, base + url, DESKTOP, MEASURE_PAGE)
            tabs = evaluate(browser, base + url, PHONE, TAB_ROWS)
            examples = [Example(**e) for e in counts.pop("examples")]
            most = max((t["rows"] for t in tabs), default=0)
            scrolls = any(t["scrolls"] for t in tabs)
            report.pages.append(Page(url, **counts, examples=examples, tab_rows=most, tabs_scroll=scrolls))
        browser.close()
    return report


def measure_commit(root: Path, ref: str, work: Path) -> Report:
    """The site as it was at commit ref, from a temporary export of that commit (git archive)."""
    resolve = ["git", "-C", str(root), "rev-parse", "--short", "--verify", f"{ref}^{{commit}}"]
    done = subprocess.run(resolve, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValueError(f"{ref!r} is not a commit of {root}: {done.stderr.strip()}")
    commit = done.stdout.strip()
    tree, tar = work / f"at-{commit}", work / f"{commit}.tar"
    subprocess.run(["git", "-C", str(root), "archive", f"--output={tar}", commit], check=True)
    with tarfile.open(tar) as archive:
        archive.extractall(tree, filter="data")
    try:
        return measure(tree, work / f"build-{commit}", source=f"commit {commit}")
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def rows(report: Report) -> list[Row]:
    """The report's figures beside their goals: one row per page, then the totals."""
    pages, out = report.pages, []
    for p in pages:
        out.append(Row(f"visible prose words: /{p.url}", p.prose_words, "≤ 1,200 a page", 1200))
        code = p.prose_code_lines + sum(e.code_lines for e in p.examples)
        out.append(Row(f"code lines shown: /{p.url}", code, "-", None, f"{p.prose_code_lines} in prose"))
    examples = [e for p in pages for e in p.examples]
    words = sum(p.prose_words for p in pages)
    code = sum(r.value for r in out[1::2])
    shown = sum(e.output_lines for e in examples)
    marked = sum(e.highlighted_lines for e in examples)
    minutes = (words / WORDS_A_MINUTE * 60 + code * CODE_LINE_S + shown * OUTPUT_LINE_S) / 60
    none = Example("-", 0, 0, True)
    longest = max(examples, key=lambda e: e.code_lines, default=none)
    wordiest = max(examples, key=lambda e: e.machinery_words, default=none)
    tabs = max(pages, key=lambda p: p.tab_rows, default=Page("", 0, 0, 0, 0, []))
    in_prose = sum(p.prose_code_lines for p in pages)
    commands = sum(p.recorder_commands for p in pages)
    said = f"on {sum(p.recorder_commands > 0 for p in pages)} pages"
    said += f"; {sum(p.recorder_commands_shown for p in pages)} shown without a click"
    blank = sum(not e.opens_with_output for e in examples)
    scrolls = "scrolls sideways: counted as 1 row" if tabs.tabs_scroll else f"/{tabs.url}"
    return out + [
        Row("visible prose words, all pages", words, "≤ 6,000", 6000),
        Row("code lines shown unfolded, all pages", code, "≤ 350", 350),
        Row("output lines shown, all pages", shown, "-"),
        Row(
            "output lines highlighted, all pages",
            marked,
            "≤ a third of those shown",
            shown // 3,
            f"{marked / shown:.0%}" if shown else "",
        ),
        Row(
            "modelled reading time, minutes",
            round(minutes),
            "≤ 30",
            30,
            f"{words / WORDS_A_MINUTE:.1f} reading, {code * CODE_LINE_S / 60:.1f} code, "
            f"{shown * OUTPUT_LINE_S / 60:.1f} outputs",
        ),
        Row("code lines shown in the prose's code blocks, all pages", in_prose, "-"),
        Row("code lines shown, longest example", longest.code_lines, "≤ 40", 40, longest.id),
        Row("machinery words, wordiest example", wordiest.machinery_words, "≤ 30", 30, wordiest.id),
        Row("examples opening with no output", blank, "0", 0, f"of {len(examples)}"),
        Row("recorder commands on lesson pages", commands, "0", 0, said),
        Row("tab-label rows on a 390 px phone, most", tabs.tab_rows, "-", None, scrolls),
    ]


def table(now: Report, before: Report | None = None) -> str:
    """A Markdown table of the figures (before | now | goal | verdict), then each example's."""
    old = {r.name: r for r in rows(before)} if before else {}
    new = {r.name: r for r in rows(now)}

    def cell(r: Row | None) -> str:
        return "-" if r is None else f"{r.value:,}" + (f" ({r.detail})" if r.detail else "")

    lines = ["| figure |" + (" before |" if before else "") + " now | goal | verdict |"]
    lines.append("|---|---|---|---|" + ("---|" if before else ""))
    for name in list(new) + [n for n in old if n not in new]:
        r, b = new.get(name), old.get(name)
        verdict = {True: "within", False: "OVER", None: "-"}[r.ok if r else None]
        goal = (r or b or Row("", 0, "-")).goal
        lines.append(
            f"| {name} |" + (f" {cell(b)} |" if before else "") + f" {cell(r)} | {goal} | {verdict} |"
        )
    for report in filter(None, (before, now)):
        for what, key in (("code lines", "code_lines"), ("machinery words", "machinery_words")):
            each = ", ".join(f"{e.id} {getattr(e, key)}" for p in report.pages for e in p.examples)
            lines.append(f"- {what} per example, {report.source}: {each}")
    return "\n".join(lines)


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    p = argparse.ArgumentParser(prog="reading.py", description=__doc__)
    p.add_argument("--before", metavar="REF", help="also measure the site at this git commit")
    p.add_argument("--json", type=Path, help="also write the counts and figures to this JSON file")
    args = p.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="reading-") as tmp:
            before = measure_commit(root, args.before, Path(tmp)) if args.before else None
            now = measure(root, Path(tmp) / "now")
    except (Unavailable, ValueError) as exc:
        print(f"reading.py: cannot measure: {exc}", file=sys.stderr)
        return 2
    print(f"Reading pages counted in Chromium ({DESKTOP['width']} px; tab rows at {PHONE['width']} px):")
    print(table(now, before))
    if args.json:
        data: dict[str, Any] = {"now": asdict(now), "before": asdict(before) if before else None}
        data["figures"] = [{**asdict(r), "ok": r.ok} for r in rows(now)]
        args.json.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return 0 if all(r.ok is not False for r in rows(now)) else 1


if __name__ == "__main__":
    sys.exit(main())
