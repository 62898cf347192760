"""The site's generated tables: ``/// recordings`` (every snippet on every target, and the
machines), ``/// machine-table`` (every verdict line beside every target), ``/// target-settings``.
Elements rather than raw HTML, so MkDocs resolves and checks their links.
"""

from __future__ import annotations

import logging
import posixpath
import re
import xml.etree.ElementTree as etree
from collections.abc import Iterable, Iterator

from markdown.util import AtomicString
from pymdownx.blocks.block import Block

from ..config import lessons
from ..config import targets as targets_
from ..config.schema import Key
from ..model import describe, escape, lines
from ..model.store import Standing, Store
from . import blocks, table_data

log = logging.getLogger("mkdocs.extensions.recorded")


def _as_written(text: object) -> AtomicString:
    """Text shown as written: an AtomicString, or Python-Markdown's inline patterns would read a
    ``<script>`` in a table cell again as HTML."""
    return AtomicString(escape.visible(text))


def _text(parent: etree.Element, tag: str, text: object, attrs: dict | None = None) -> etree.Element:
    """A child element holding ``text``, shown as written."""
    element = etree.SubElement(parent, tag, attrs or {})
    element.text = _as_written(text)
    return element


def _facts(parent: etree.Element, facts: Iterable[tuple[str, object]]) -> None:
    """A list of "label: text" items."""
    listed = etree.SubElement(parent, "ul")
    for label, text in facts:
        item = etree.SubElement(listed, "li")
        _text(item, "strong", f"{label}: ")
        _text(item, "span", text)


def _table(parent: etree.Element, columns: list[str], scope: dict, caption: str = "") -> etree.Element:
    """A table with its caption and head row; its body is returned."""
    table = etree.SubElement(parent, "table")
    if caption:
        _text(table, "caption", caption)
    head = etree.SubElement(etree.SubElement(table, "thead"), "tr")
    for name in columns:
        _text(head, "th", name, scope)
    return etree.SubElement(table, "tbody")


def _lesson_heading(parent: etree.Element, prefix: str, lesson: str, declared: dict) -> str:
    title = lessons.title(declared, lesson)
    _text(parent, "h2", title, {"id": f"{prefix}{blocks.anchor(lesson or 'top-level')}"})
    return title


class RawBlock(Block):
    """A block whose body is not read as Markdown, built into a ``<div class=CSS_CLASS>``; by
    default with no argument."""

    ARGUMENT: bool | None = False
    CSS_CLASS = ""

    def on_markdown(self) -> str:
        return "raw"

    def on_create(self, parent: etree.Element) -> etree.Element:
        return etree.SubElement(parent, "div", {"class": self.CSS_CLASS})


class _TableBlock(RawBlock):
    """A table of every snippet's recordings; a snippet that cannot be read (a link out of
    snippets/, no read permission) is a warning naming the page and line, not a failed build."""

    def on_end(self, block: etree.Element) -> None:
        block.text = None
        store: Store = self.config["store"]
        problems: list[str] = []
        items = table_data.entries(store, problems)
        for problem in problems:
            log.warning(f"{self.config['page'].line_of(self.NAME)}: {problem}")
        self.fill(block, store, items)

    def fill(self, block: etree.Element, store: Store, items: list[Standing]) -> None:
        raise NotImplementedError


class RecordingsBlock(_TableBlock):
    """``/// recordings``: every snippet x target with its state, and the machines used."""

    NAME = "recordings"
    CSS_CLASS = "recordings-inventory"

    def fill(self, block: etree.Element, store: Store, items: list[Standing]) -> None:
        # Each snippet links to the first block showing it.
        self.shown = {b.snippet: b.link for b in reversed(table_data.page_blocks(self.config["docs"]))}
        for orphan in store.orphans():
            name = orphan.relative_to(store.root).as_posix()
            log.warning(f"{name} is a recording of no snippet (renamed or deleted?); delete it.")
        _text(block, "p", table_data.totals(items), {"class": "recordings-totals"})
        declared = lessons.load(store.root)
        for lesson, rows in table_data.by_lesson(items, declared).items():
            _lesson_heading(block, "lesson-", lesson, declared)
            self.table(block, rows)
        _text(block, "h2", "Machines", {"id": "machines"})
        for title, (m, made) in table_data.machines(items).items():
            _text(block, "h3", title, {"id": describe.anchor(m)})
            made_for = {e.target for e in made}
            recorded = ", ".join(t.label for t in store.targets if t in made_for)
            features = ", ".join(describe.telling_features(m)) or "none of those listed"
            facts = {
                "recorded": f"{len(made)} recordings, target {recorded}",
                "CPU": describe.cpu(m),
                "CPU features that matter here": features,
                "GPU": describe.gpu(m) or "none visible",
                "operating system": m.get("os"),
                "Python, torch, numpy": ", ".join(str(m.version(x)) for x in ("python", "torch", "numpy")),
            }
            _facts(block, facts.items())

    def table(self, parent: etree.Element, items: list[Standing]) -> None:
        columns = ["snippet", "target", "state", "run time", "recorded", "machine"]
        body = _table(parent, columns, {})
        for e in items:
            row = etree.SubElement(body, "tr", {"class": f"state-{e.state.name.lower()}"})
            cell = etree.SubElement(row, "td")
            if page := self.shown.get(e.snippet.name):
                cell = etree.SubElement(cell, "a", {"href": page})
            # A long name breaks only after a / or _, never inside a word (recorded.css).
            first, *rest = re.split(r"(?<=[/_])", e.snippet.name)
            code = _text(cell, "code", first)
            for piece in rest:
                etree.SubElement(code, "wbr").tail = _as_written(piece)
            r = e.recording
            run = (
                (f"{r.duration_s:.1f} s", r.recorded_at[:10], describe.machine(r.machine)) if r else ("",) * 3
            )
            for value, column in zip((e.target.label, e.state.value, *run), columns[1:], strict=True):
                _text(row, "td", value, {"data-column": column})


class MachineTableBlock(_TableBlock):
    """``/// machine-table``: each verdict line of each lesson (rows) beside each target
    (columns), linked to the block that explains it, then the machine behind each target.
    What counts as a verdict line: model/lines.py; the rows: table_data.py."""

    NAME = "machine-table"
    CSS_CLASS = "machine-table"

    def fill(self, block: etree.Element, store: Store, items: list[Standing]) -> None:
        declared = lessons.load(store.root)
        tables = table_data.rows(store, self.config["docs"], items)
        if not tables:
            _text(block, "p", "No snippet prints a verdict line yet.")
        for lesson, rows in tables.items():
            self.table(block, _lesson_heading(block, "verdicts-", lesson, declared), rows)
        _text(block, "h2", "The machines", {"id": "the-machines"})
        torches = sorted({v for e in items if e.recording and (v := e.recording.machine.release("torch"))})
        if len(torches) > 1:
            said = f"The tabs ran different PyTorch versions ({', '.join(torches)}): a difference between "
            _text(block, "p", said + "two columns may come from the version as well as from the machine.")
        facts = []
        for t, seen in table_data.target_machines(store, items).items():
            text = f"{t.description}. "
            text += f"Recorded on {'; '.join(seen)}." if seen else "Not recorded yet on this kind of machine."
            change = describe.emulation(t, store.targets)
            if change and t.host:
                host = store.targets[t.host].label
                text += f" The same machine as {host}, with one thing changed: {change}."
            facts.append((t.label, text))
        _facts(block, facts)

    def table(self, parent: etree.Element, title: str, rows: list[table_data.Row]) -> None:
        store: Store = self.config["store"]
        here = posixpath.dirname(self.config["page"].name)
        # The columns are named as the tabs are, in a word or two: the table fits a page's column.
        columns = ["Printed line, and where it is explained", *(t.tab for t in store.targets), "Differs"]
        caption = f"{title}: each verdict line, as each kind of machine printed it"
        body = _table(parent, columns, {"scope": "col"}, caption)
        for row in rows:
            changes = row.changes
            kind = {True: "verdict-changes", False: "verdict-same", None: "verdict-unknown"}[changes]
            tr = etree.SubElement(body, "tr", {"class": kind})
            th = etree.SubElement(tr, "th", {"scope": "row"})
            _text(th, "code", lines.shown_label(row.label, row.nth))
            etree.SubElement(th, "br")
            if row.block:
                path, _, fragment = row.block.link.partition("#")
                href = posixpath.relpath(path, here or ".") + (f"#{fragment}" if fragment else "")
                _text(th, "a", row.block.where, {"href": href, "class": "verdict-where"})
            else:
                _text(th, "span", f"{row.snippet} (on no page)", {"class": "verdict-where"})
            for target in store.targets:
                cell = row.cells[target.name]
                kind = f"verdict-{cell.kind}"
                if cell.kind == "value":
                    kind += f" verdict-{cell.text.replace(' ', '-').lower()}"
                # data-column names the value where a phone shows each row as a list (recorded.css).
                attrs = {"class": kind + " verdict-earlier" * cell.earlier, "data-column": target.tab}
                td = _text(tr, "td", cell.text, attrs)
                notes = (cell.runs.removeprefix("in "), table_data.EARLIER * cell.earlier)
                for note in filter(None, notes):  # each on a line of its own, smaller, under the value
                    etree.SubElement(td, "br")
                    _text(td, "span", note, {"class": "verdict-runs"})
            _text(tr, "td", {True: "yes", False: "no", None: "–"}[changes], {"data-column": columns[-1]})


class TargetSettingsBlock(RawBlock):
    """``/// target-settings``: every key a target may declare, read from the recorder's own
    schema (config/targets.py), so the guide and the validator cannot disagree."""

    NAME = "target-settings"
    CSS_CLASS = "target-settings"

    def on_end(self, block: etree.Element) -> None:
        # A list rather than a table: three columns of sentences do not fit a phone.
        block.text = None
        listed = etree.SubElement(block, "dl")
        for name, key in settings_rows(targets_.SCHEMA):
            term = etree.SubElement(listed, "dt")
            _text(term, "code", name)
            if key.required:
                said = "required"
            elif key.default in (None, [], {}):
                said = "optional"
            else:
                said = f"default {str(key.default).lower()}"
            _text(term, "span", f"{key.expected}; {said}", {"class": "target-settings-value"})
            with_code(etree.SubElement(listed, "dd"), key.means)


def with_code(cell: etree.Element, text: str) -> None:
    """``text`` into ``cell``, its `quoted` words as code (each still plain text)."""
    parts = text.split("`")
    cell.text = _as_written(parts[0])
    for code, after in zip(parts[1::2], [*parts[2::2], ""], strict=False):
        _text(cell, "code", code).tail = _as_written(after)


def settings_rows(schema: dict[str, Key], prefix: str = "") -> Iterator[tuple[str, Key]]:
    """Each key of a schema, a nested table's keys after it (``check.code``)."""
    for name, key in schema.items():
        yield prefix + name, key
        yield from settings_rows(key.table or {}, f"{prefix}{name}.")
