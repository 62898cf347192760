"""The site's generated tables: ``/// recordings`` (every snippet on every target, and the
machines used) and ``/// machine-table`` (every verdict line beside every target).

Both are built as elements rather than raw HTML, so MkDocs resolves and checks their links
to pages. They read recordings and never run a snippet.
"""

from __future__ import annotations

import logging
import posixpath
import xml.etree.ElementTree as etree

from pymdownx.blocks.block import Block

from ..config import lessons
from ..config import targets as targets_
from ..config.schema import Key
from ..model import describe
from ..model.store import Status, Store
from . import blocks, inventory, verdict_table
from .markup import element_text

log = logging.getLogger("mkdocs.extensions.recorded")


class _GeneratedBlock(Block):
    """A block with no argument and no Markdown inside, whose content is built from the
    project into a ``<div class=CSS_CLASS>``."""

    ARGUMENT = False
    CSS_CLASS = ""

    def on_markdown(self) -> str:
        return "raw"

    def on_create(self, parent: etree.Element) -> etree.Element:
        return etree.SubElement(parent, "div", {"class": self.CSS_CLASS})


class _TableBlock(_GeneratedBlock):
    """A table built from every snippet's recordings; a snippet that cannot be read (a link
    out of snippets/, a file without read permission) is a warning naming the page and
    line, not a failed build."""

    def entries(self, store: Store) -> list[Status]:
        problems: list[str] = []
        items = inventory.entries(store, problems)
        for problem in problems:
            log.warning(f"{self.config['page'].line_of(self.NAME)}: {problem}")
        return items


class RecordingsBlock(_TableBlock):
    """``/// recordings``: every snippet x target with its state, and the machines used.

    Built as elements, not raw HTML, so MkDocs resolves and checks the links to pages.
    """

    NAME = "recordings"
    CSS_CLASS = "recordings-inventory"

    def on_end(self, block: etree.Element) -> None:
        block.text = None
        store: Store = self.config["store"]
        items = self.entries(store)
        self.shown = inventory.pages_showing(self.config["docs"])
        for orphan in store.orphans():
            log.warning(
                f"{orphan.relative_to(store.root).as_posix()} is a recording of no snippet "
                "(renamed or deleted?); delete it."
            )
        etree.SubElement(block, "p", {"class": "recordings-totals"}).text = element_text(
            inventory.totals(items)
        )
        declared = lessons.load(store.root)
        for lesson, rows in inventory.by_lesson(items, declared).items():
            heading = etree.SubElement(block, "h2", {"id": f"lesson-{blocks.anchor(lesson or 'top-level')}"})
            heading.text = element_text(lessons.title(declared, lesson))
            self.table(block, rows)
        etree.SubElement(block, "h2", {"id": "machines"}).text = element_text("Machines")
        for title, info in inventory.machines(items).items():
            m = info["machine"]
            etree.SubElement(block, "h3", {"id": describe.anchor(m)}).text = element_text(title)
            facts = etree.SubElement(block, "ul")
            for label, value in (
                (
                    "recorded",
                    f"{info['count']} recordings, target {', '.join(store.targets.label(t) for t in store.targets.names if t in info['targets'])}",
                ),
                ("CPU", describe.cpu(m)),
                (
                    "CPU features that matter here",
                    ", ".join(describe.telling_features(m)) or "none of those listed",
                ),
                ("GPU", describe.gpu(m) or "none visible"),
                ("operating system", m.get("os")),
                (
                    "Python, torch, numpy",
                    ", ".join(str(m.version(lib)) for lib in ("python", "torch", "numpy")),
                ),
            ):
                item = etree.SubElement(facts, "li")
                etree.SubElement(item, "strong").text = element_text(f"{label}: ")
                etree.SubElement(item, "span").text = element_text(str(value))

    def table(self, parent: etree.Element, items: list[Status]) -> None:
        store: Store = self.config["store"]
        table = etree.SubElement(parent, "table")
        head = etree.SubElement(etree.SubElement(table, "thead"), "tr")
        for title in ("snippet", "target", "state", "run time", "recorded", "machine"):
            etree.SubElement(head, "th").text = element_text(title)
        body = etree.SubElement(table, "tbody")
        for e in items:
            row = etree.SubElement(body, "tr", {"class": f"state-{e.state.name.lower()}"})
            cell = etree.SubElement(row, "td")
            if page := self.shown.get(e.snippet.name):
                link = etree.SubElement(cell, "a", {"href": page})
                etree.SubElement(link, "code").text = element_text(e.snippet.name)
            else:
                etree.SubElement(cell, "code").text = element_text(e.snippet.name)
            rec = e.recording
            values = (
                store.targets.label(e.target),
                e.state.value,
                f"{rec.duration_s:.1f} s" if rec else "",
                rec.recorded_at[:10] if rec else "",
                describe.machine(rec.machine) if rec else "",
            )
            for value in values:
                etree.SubElement(row, "td").text = element_text(value)


class MachineTableBlock(_TableBlock):
    """``/// machine-table``: each verdict line of each lesson (rows) beside each target
    (columns), every row linked to the block on the page that explains it, and then the
    machine behind each target. See verdict_table.py for what counts as a verdict line."""

    NAME = "machine-table"
    CSS_CLASS = "machine-table"

    def on_end(self, block: etree.Element) -> None:
        block.text = None
        store: Store = self.config["store"]
        docs = self.config["docs"]
        items = self.entries(store)
        declared = lessons.load(store.root)
        tables = verdict_table.rows(store, docs, items)
        if not tables:
            etree.SubElement(block, "p").text = element_text("No snippet prints a verdict line yet.")
        for lesson, rows in tables.items():
            title = lessons.title(declared, lesson)
            anchor = f"verdicts-{blocks.anchor(lesson or 'top-level')}"
            etree.SubElement(block, "h2", {"id": anchor}).text = element_text(title)
            self.table(block, title, rows)
        etree.SubElement(block, "h2", {"id": "the-machines"}).text = element_text("The machines")
        torches = sorted({v for e in items if e.recording and (v := e.recording.machine.release("torch"))})
        if len(torches) > 1:
            etree.SubElement(block, "p").text = element_text(
                f"The tabs ran different PyTorch versions ({', '.join(torches)}): a difference between two "
                "columns may come from the version as well as from the machine."
            )
        facts = etree.SubElement(block, "ul")
        for target, seen in verdict_table.machines(store, items).items():
            t = store.targets.get(target)
            item = etree.SubElement(facts, "li")
            etree.SubElement(item, "strong").text = element_text(f"{t.label}: ")
            text = f"{t.description}. "
            text += f"Recorded on {'; '.join(seen)}." if seen else "Not recorded yet on this kind of machine."
            change = describe.emulation(t, store.targets)
            if change and t.host:
                text += (
                    f" The same machine as {store.targets.label(t.host)}, with one thing changed: {change}."
                )
            etree.SubElement(item, "span").text = element_text(text)

    def table(self, parent: etree.Element, title: str, rows: list[verdict_table.Row]) -> None:
        store: Store = self.config["store"]
        here = posixpath.dirname(self.config["page"].name)
        table = etree.SubElement(parent, "table")
        caption = f"{title}: each verdict line, as each kind of machine printed it"
        etree.SubElement(table, "caption").text = element_text(caption)
        head = etree.SubElement(etree.SubElement(table, "thead"), "tr")
        # The columns are named as the tabs are, in a word or two: the table fits a page's column.
        columns = ["Printed line, and where it is explained", *(t.tab for t in store.targets), "Differs"]
        for name in columns:
            etree.SubElement(head, "th", {"scope": "col"}).text = element_text(name)
        body = etree.SubElement(table, "tbody")
        for row in rows:
            changes = row.changes
            kind = {True: "verdict-changes", False: "verdict-same", None: "verdict-unknown"}[changes]
            tr = etree.SubElement(body, "tr", {"class": kind})
            th = etree.SubElement(tr, "th", {"scope": "row"})
            etree.SubElement(th, "code").text = element_text(row.label)
            etree.SubElement(th, "br")
            if row.page:
                path, _, fragment = row.page.partition("#")
                href = posixpath.relpath(path, here or ".") + (f"#{fragment}" if fragment else "")
                link = etree.SubElement(th, "a", {"href": href, "class": "verdict-where"})
                link.text = element_text(row.where)
            else:
                etree.SubElement(th, "span", {"class": "verdict-where"}).text = element_text(
                    f"{row.where} (on no page)"
                )
            for target in store.targets.names:
                cell = row.cells[target]
                kind = f"verdict-{cell.kind}" + (
                    f" verdict-{cell.text.replace(' ', '-').lower()}" if cell.kind == "value" else ""
                )
                kind += " verdict-earlier" * cell.earlier
                td = etree.SubElement(tr, "td", {"class": kind})
                td.text = element_text(cell.text)
                notes = [cell.runs.removeprefix("in ")] * bool(cell.runs) + [
                    verdict_table.EARLIER
                ] * cell.earlier
                for note in notes:  # each on a line of its own, smaller, under the value
                    etree.SubElement(td, "br")
                    etree.SubElement(td, "span", {"class": "verdict-runs"}).text = element_text(note)
            etree.SubElement(tr, "td").text = element_text({True: "yes", False: "no", None: "–"}[changes])


class TargetSettingsBlock(_GeneratedBlock):
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
            etree.SubElement(term, "code").text = element_text(name)
            etree.SubElement(term, "span", {"class": "target-settings-value"}).text = element_text(
                value_words(key)
            )
            with_code(etree.SubElement(listed, "dd"), key.means)


def with_code(cell: etree.Element, text: str) -> None:
    """``text`` into ``cell``, its `quoted` words as code (each still plain text)."""
    parts = text.split("`")
    cell.text = element_text(parts[0])
    for code, after in zip(parts[1::2], [*parts[2::2], ""], strict=False):
        etree.SubElement(cell, "code").text = element_text(code)
        cell[-1].tail = element_text(after)


def settings_rows(schema: dict[str, Key], prefix: str = "") -> list[tuple[str, Key]]:
    """Each key of a schema, a nested table's keys after it (``check.code``)."""
    rows = []
    for name, key in schema.items():
        rows.append((prefix + name, key))
        if key.table:
            rows += settings_rows(key.table, f"{prefix}{name}.")
    return rows


def value_words(key: Key) -> str:
    if key.required:
        return f"{key.expected}; required"
    if key.default not in (None, [], {}):
        return f"{key.expected}; default {str(key.default).lower()}"
    return f"{key.expected}; optional"
