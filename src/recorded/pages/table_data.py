"""What the generated tables show: every snippet on every target and the machines that recorded
them (the recordings page), and each verdict line (model/lines.py) beside every target.

A verdict row is one verdict line of one snippet, paired across targets as ``--compare`` pairs
them (label and occurrence, ``lines.parse``). Rows come from every shown recording (stale ones say
so) and every claim a page makes, so a row stays ("not recorded yet") while it is re-recorded.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..config.lessons import Lesson, lesson_of
from ..config.lessons import load as load_lessons
from ..config.targets import Target
from ..model import describe
from ..model.lines import TIMING_VERDICTS, answers, parse, runs_note
from ..model.machines import Machine
from ..model.snippets import discover
from ..model.store import WITH_OUTPUT, Standing, State, Store
from . import blocks

#: What a cell says beside a value printed by an earlier version of the snippet's code.
EARLIER = "earlier code"
#: What a cell says for a snippet with no shown recording on the target, by its state.
_NO_VALUE = {
    State.MISSING: "not recorded yet",
    State.FAILED: "failed",
    State.INVALID: "unreadable",
    State.NOT_APPLICABLE: "not applicable",
}
_HEADING = re.compile(r"(#{1,6}) (.*)")  # an ATX heading


def recordings_page(docs_dir: Path) -> str | None:
    """The page holding the ``/// recordings`` block, where provenance lines link; None without one."""
    for page in sorted(Path(docs_dir).rglob("*.md")):
        if any(line.startswith("/// recordings") for line in page.read_text(encoding="utf-8").splitlines()):
            return page.relative_to(docs_dir).as_posix()
    return None


def entries(store: Store, problems: list[str]) -> list[Standing]:
    """Every snippet on every target; one that cannot be read is left out and said in ``problems``."""
    return [
        store.standing(snippet, target)
        for snippet in discover(store.snippets_dir, store.targets, problems)
        for target in store.targets
    ]


def by_lesson(items: list[Standing], declared: dict[str, Lesson]) -> dict[str, list[Standing]]:
    """The entries by lesson: the declared lessons in their order, then other folders by name."""
    groups: dict[str, list[Standing]] = {}
    for e in items:
        groups.setdefault(lesson_of(e.snippet.name), []).append(e)
    order = [name for name in declared if name in groups] + sorted(set(groups) - set(declared))
    return {name: groups[name] for name in order}


def machines(items: list[Standing]) -> dict[str, tuple[Machine, list[Standing]]]:
    """Each distinct machine, by its description, with the entries it recorded."""
    found: dict[str, tuple[Machine, list[Standing]]] = {}
    for e in items:
        if e.recording:
            found.setdefault(describe.machine(e.recording.machine), (e.recording.machine, []))[1].append(e)
    return found


def totals(items: list[Standing]) -> str:
    """A one-line summary, like Sphinx-Gallery's execution statistics."""
    states = Counter(e.state for e in items)
    seconds = sum(e.recording.duration_s for e in items if e.recording and e.state is State.FRESH)
    parts = [f"{states[s]} {s.value}" for s in State if states[s]]
    snippets = len({e.snippet.name for e in items})
    targets = len({e.target for e in items})
    return (
        f"{snippets} snippets on {targets} targets: {', '.join(parts)}. "
        f"The fresh recordings ran for {seconds:.1f} s in all."
    )


@dataclass(frozen=True)
class Cell:
    text: str  #: the value printed, or why there is none
    kind: str  #: "value", or the state that left no value ("stale", "missing", ...)
    runs: str = ""  #: for a timing verdict, how many fresh runs gave it: "in 3 of 3 runs"
    earlier: bool = False  #: printed by an earlier version of the snippet's code


@dataclass
class Row:
    snippet: str
    label: str
    nth: int  #: how many lines of the snippet's output had this label before this one
    block: PageBlock | None  #: the first block that shows the snippet, where the row links
    cells: dict[str, Cell] = field(default_factory=dict)

    @property
    def changes(self) -> bool | None:
        """Whether the recorded values differ between targets; None below two values."""
        values = [c.text for c in self.cells.values() if c.kind == "value"]
        return len(set(values)) > 1 if len(values) > 1 else None


@dataclass(frozen=True)
class PageBlock:
    page: str  #: under docs/
    line: int
    snippet: str
    body: str
    where: str  #: "Page title › section"

    @property
    def link(self) -> str:
        """Docs-relative "page.md#anchor" of the block."""
        return f"{self.page}#{blocks.anchor(self.snippet)}"


def page_blocks(docs_dir: Path) -> list[PageBlock]:
    """Every ``/// recorded`` block of the site with its body and the section it sits in."""
    found = []
    for path in sorted(Path(docs_dir).rglob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        read = blocks.read(lines)
        fenced = read.fenced()
        # (line number, level, text) of each ATX heading outside fenced code
        outline = [
            (number, len(h[1]), h[2].split(" {", 1)[0].strip().rstrip("#").strip().replace("`", ""))
            for number, line in enumerate(lines, 1)
            if number not in fenced and (h := _HEADING.fullmatch(line)) and h[2].strip()
        ]
        title = next((text for _, level, text in outline if level == 1), path.stem)
        for block in read.blocks:
            if block.nested:  # the page itself warns about it; its claims are not read
                continue
            section = [text for number, level, text in outline if number < block.line and level > 1]
            where = f"{title} › {section[-1]}" if section else title
            page = path.relative_to(docs_dir).as_posix()
            found.append(PageBlock(page, block.line, block.argument, block.body, where))
    return found


def _keys(lines: Iterable[str]) -> list[tuple[str, int]]:
    """(label, occurrence) of each verdict line, as the table and --compare pair them."""
    return [(label, n) for kind, label, n in parse(list(lines)) if kind == "verdict"]


def _claimed(block: PageBlock, targets: tuple[str, ...]) -> list[tuple[str, int]]:
    """The verdict lines a block claims on any target, in the order it claims them."""
    try:
        spec = blocks.parse(block.snippet, block.body, targets, block.line + 1)
    except blocks.BlockError:
        return []  # the page itself warns about a malformed block
    return [k for t in targets for group in spec.claims_for(t) for k in _keys(group)]


def rows(store: Store, docs_dir: Path, items: list[Standing]) -> dict[str, list[Row]]:
    """The verdict table's rows by lesson (ordered as on the recordings page), from ``entries``."""
    names, shown = store.targets.names, page_blocks(docs_dir)
    first = {b.snippet: b for b in reversed(shown)}
    out: dict[str, list[Row]] = {}
    for lesson, entries in by_lesson(items, load_lessons(store.root)).items():
        table = []
        # entries() lists each snippet's targets together.
        for snippet, group in itertools.groupby(entries, key=lambda e: e.snippet.name):
            cells = list(group)
            recs = [e.recording for e in cells if e.state in WITH_OUTPUT and e.recording]
            keys = [key for rec in recs for key in _keys(rec.stdout)]
            keys += [key for b in shown if b.snippet == snippet for key in _claimed(b, names)]
            for label, n in dict.fromkeys(keys):
                by_target = {e.target.name: _cell(e, label, n) for e in cells}
                table.append(Row(snippet, label, n, first.get(snippet), by_target))
        if table:
            out[lesson] = table
    return out


def _cell(entry: Standing, label: str, n: int) -> Cell:
    rec = entry.recording
    if entry.state not in WITH_OUTPUT or rec is None:
        return Cell(_NO_VALUE[entry.state], entry.state.name.lower())
    (value,) = answers([rec.stdout], label, n)
    if value is None:
        return Cell("not printed", "not-printed")
    runs = runs_note(rec.outputs, value, label, n)
    return Cell(value, "value", runs if value in TIMING_VERDICTS else "", entry.state is State.STALE)


def target_machines(store: Store, items: list[Standing]) -> dict[Target, list[str]]:
    """target -> the machines its shown recordings were made on, as described on the pages."""
    found: dict[Target, list[str]] = {t: [] for t in store.targets}
    for e in items:
        if e.state in WITH_OUTPUT and e.recording:
            torch = e.recording.machine.version("torch")
            text = describe.machine(e.recording.machine) + (f", torch {torch}" if torch else "")
            if text not in found[e.target]:
                found[e.target].append(text)
    return found
