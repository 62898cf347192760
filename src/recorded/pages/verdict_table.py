"""The table that sets each verdict line (model/lines.py) beside every target.

A row is one verdict line of one snippet, paired across targets as ``--compare`` pairs them:
by its label and how many times the label came before (``lines.parse``). Its lines come from
every shown recording (fresh, or of an earlier version of the code: its cells say so) and
every claim a page makes, so a row stays in the table (saying "not recorded yet") while its
recordings are redone.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..config.lessons import load as load_lessons
from ..config.targets import Target
from ..model import describe
from ..model.lines import TIMING_VERDICTS, answers, parse, runs_note
from ..model.store import WITH_OUTPUT, Standing, State, Store
from . import blocks, inventory

#: What a cell says beside a value printed by an earlier version of the snippet's code.
EARLIER = "earlier code"
#: What a cell says for a snippet with no shown recording on the target, by its state.
_NO_VALUE = {
    State.MISSING: "not recorded yet",
    State.FAILED: "failed",
    State.INVALID: "unreadable",
    State.NOT_APPLICABLE: "not applicable",
}


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
        outline = _headings(lines, read.fenced())
        title = next((text for _, level, text in outline if level == 1), path.stem)
        for block in read.blocks:
            if block.nested:  # the page itself warns about it; its claims are not read
                continue
            section = [text for number, level, text in outline if number < block.line and level > 1]
            where = f"{title} › {section[-1]}" if section else title
            page = path.relative_to(docs_dir).as_posix()
            found.append(PageBlock(page, block.line, block.argument, block.body, where))
    return found


def _headings(lines: list[str], fenced: set[int]) -> list[tuple[int, int, str]]:
    """(line number, level, text) of the ATX headings outside fenced code."""
    found = []
    for number, line in enumerate(lines, 1):
        hashes, _, text = line.partition(" ")
        if number not in fenced and set(hashes) == {"#"} and len(hashes) <= 6 and text.strip():
            text = text.split(" {", 1)[0].strip().rstrip("#").strip().replace("`", "")
            found.append((number, len(hashes), text))
    return found


#: A verdict line as the table and --compare pair it: (label, occurrence).
Key = tuple[str, int]


def _keys(lines: Iterable[str]) -> list[Key]:
    return [(label, n) for kind, label, n in parse(list(lines)) if kind == "verdict"]


def claimed_keys(block: PageBlock, targets: tuple[str, ...]) -> list[Key]:
    """The verdict lines a block claims on any target, in the order it claims them."""
    try:
        spec = blocks.parse(block.snippet, block.body, targets, block.line + 1)
    except blocks.BlockError:
        return []  # the page itself warns about a malformed block
    return list(dict.fromkeys(k for t in targets for group in spec.claims_for(t) for k in _keys(group)))


def rows(store: Store, docs_dir: Path, items: list[Standing]) -> dict[str, list[Row]]:
    """The table's rows by lesson (ordered as on the recordings page), from ``items``,
    the site's ``inventory.entries``."""
    names, shown = store.targets.names, page_blocks(docs_dir)
    first = {b.snippet: b for b in reversed(shown)}
    out: dict[str, list[Row]] = {}
    for lesson, entries in inventory.by_lesson(items, load_lessons(store.root)).items():
        table = []
        # inventory.entries lists each snippet's targets together.
        for snippet, group in itertools.groupby(entries, key=lambda e: e.snippet.name):
            cells = list(group)
            recs = [e.recording for e in cells if e.state in WITH_OUTPUT and e.recording]
            keys = [key for rec in recs for key in _keys(rec.stdout)]
            keys += [key for b in shown if b.snippet == snippet for key in claimed_keys(b, names)]
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
    runs = runs_note(rec.outputs, value, label, n).removeprefix(f"{value} ")
    return Cell(value, "value", runs if value in TIMING_VERDICTS else "", entry.state is State.STALE)


def machines(store: Store, items: list[Standing]) -> dict[Target, list[str]]:
    """target -> the machines its shown recordings were made on, as described on the pages."""
    found: dict[Target, list[str]] = {t: [] for t in store.targets}
    for e in items:
        if e.state in WITH_OUTPUT and e.recording:
            torch = e.recording.machine.version("torch")
            text = describe.machine(e.recording.machine) + (f", torch {torch}" if torch else "")
            if text not in found[e.target]:
                found[e.target].append(text)
    return found
