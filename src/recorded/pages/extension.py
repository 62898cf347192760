"""The Python-Markdown extension that renders ``/// recorded | snippet`` blocks (example.py) and
the generated tables (tables.py) from recordings; it never runs a snippet. Problems are warnings
on the ``mkdocs`` logger (``--strict`` fails the build on them) and boxes on the page. An extension,
not an MkDocs hook, because Zensical reads mkdocs.yml but not MkDocs hooks.
"""

from __future__ import annotations

import contextlib
import logging
import xml.etree.ElementTree as etree
from dataclasses import dataclass
from pathlib import Path

from markdown import Markdown
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from pymdownx.blocks import BlocksExtension

from ..config.settings import switched_on
from ..model import escape, renewal
from ..model.snippets import SnippetError, load
from ..model.store import Store
from . import blocks, example, markup, table_data, tables
from .site import read_site

log = logging.getLogger("mkdocs.extensions.recorded")


def _visible(record: logging.LogRecord) -> bool:
    """A warning may quote a recording: its control characters reach the terminal as escapes."""
    record.msg, record.args = escape.visible(record.getMessage()), None
    return True


log.addFilter(_visible)


class _Page(Preprocessor):
    """The page being converted: as a preprocessor, it reads its blocks (blocks.read, nested ones
    too) before pymdownx.blocks does."""

    def __init__(self, md: Markdown, recordings_page: str | None = None):
        super().__init__(md)
        self.recordings_page = recordings_page
        self.unread: list[blocks.Found] = []  #: the page's blocks that no block has claimed yet
        self.lines: list[str] = []

    def run(self, lines: list[str]) -> list[str]:
        self.unread, self.lines = list(blocks.read(lines).blocks), lines
        return lines

    def line_of(self, name: str) -> str:
        """``page:line`` of the first ``/// name`` block (a generated table)."""
        for number, line in enumerate(self.lines, 1):
            if line.strip().startswith(f"/// {name}"):
                return f"{self.name}:{number}"
        return self.name

    @property
    def name(self) -> str:
        # MkDocs registers the page's file on this treeprocessor; other hosts may not.
        file = getattr(self._relpath(), "file", None)
        return getattr(file, "src_uri", None) or "(page)"

    def claim(self, argument: str) -> blocks.Found | None:
        """The header of the block being read: the first unread one naming the same snippet.
        Not by position: pymdownx.blocks silently drops a block it cannot parse, which would pin
        every later block to the wrong line."""
        found = next((block for block in self.unread if block.argument == argument), None)
        if found is not None:
            self.unread.remove(found)
        return found

    def link_to_machine(self, anchor: str) -> str | None:
        """The URL, from this page, of a machine on the recordings page (the page holding a
        ``/// recordings`` block), as MkDocs would write a link to it; None without one."""
        if not self.recordings_page:
            return None
        relpath = self._relpath()
        here = getattr(getattr(relpath, "file", None), "url", None)
        files = getattr(relpath, "files", None)
        there = files.get_file_from_path(self.recordings_page) if files is not None else None
        if here is not None and there is not None:
            from mkdocs.utils import get_relative_url

            url = get_relative_url(there.url, here)
        else:  # not MkDocs: directory URLs, the common default
            depth, page = self.name.count("/") + (not self.name.endswith("index.md")), self.recordings_page
            url = "../" * depth + ("" if page == "index.md" else page.removesuffix(".md") + "/")
        return f"{url}#{anchor}" if anchor else url

    def _relpath(self):
        with contextlib.suppress(KeyError):  # a Markdown Registry has no .get
            return self.md.treeprocessors["relpath"]
        return None


_UNREAD = (
    " was not read as a block. Write its claims unindented between the header and the "
    "closing `///` line, with nothing after the snippet path on the header."
)


class _WarnUnread(Treeprocessor):
    """pymdownx.blocks skips a block it cannot parse without a word: say so."""

    def __init__(self, page: _Page):
        super().__init__(page.md)
        self.page = page

    def run(self, root: etree.Element) -> None:
        page = self.page
        for found in page.unread:
            # Nested or never closed: the reason every reader shares.
            said = f": {found.problem}" if found.problem else _UNREAD
            log.warning(f"{page.name}:{found.line}: `/// recorded | {found.argument}`{said}")


class RecordedBlock(tables.RawBlock):
    NAME = blocks.NAME
    ARGUMENT = None  # checked in on_end, so a missing path gets a message, not silence
    CSS_CLASS = "recorded"

    def on_end(self, block: etree.Element) -> None:
        page: _Page = self.config["page"]
        found = page.claim((self.argument or "").strip())
        where = f"{page.name}:{found.line if found else '?'}"
        # The tests read only closed blocks at the left margin: any other's claims go unchecked.
        if problem := blocks.NESTED if found is None else found.problem:
            log.warning(f"{where}: `/// recorded | {self.argument or ''}`: {problem}")
        body, block.text = str(block.text or ""), None
        del block[:]
        store: Store = self.config["store"]
        try:
            spec = blocks.parse(self.argument, body, store.targets.names, found.line + 1 if found else None)
            snippet = load(store.snippets_dir, spec.snippet, store.targets)
            block.set("id", blocks.anchor(snippet.name))  # so other pages can link to the evidence
            ctx = example.Context(store, self.config["renewal"], self.highlight, page.link_to_machine)
            shown = example.render(spec, snippet, ctx, self._next("count"))
            for message in ctx.problems:
                log.warning(f"{where}: {message}")
        except (blocks.BlockError, SnippetError) as exc:
            said = blocks.snippet_problem(exc, store.snippets_dir, self.argument or "")
            problem = said if isinstance(exc, SnippetError) else str(exc)
            message = f"{where}: recorded block: {problem}"
            log.warning(message)
            shown = markup.admonition("failure", "This block could not be shown", escape.html(message))
        block.text = self.md.htmlStash.store(shown)

    def highlight(self, src: str, title: str | None, extra: str) -> str:
        return markup.highlight(self.md, src, title=title, count=self._next("code"), classes=extra)

    def _next(self, counter: str) -> int:
        """The next number of a page-wide counter (0 first): tabs and code blocks need unique ids."""
        self.tracker[counter] = self.tracker.get(counter, -1) + 1
        return self.tracker[counter]


class RecordedExtension(BlocksExtension):
    def __init__(self, **kwargs):
        self.config = {
            "root": [".", "Project folder holding snippets/ and recordings/ (default: the current one)"],
            "strict": [
                False,
                "Also warn about missing, stale or failed recordings of every target (the release rule)",
            ],
        }
        super().__init__(**kwargs)

    def extendMarkdownBlocks(self, md: Markdown, block_mgr) -> None:
        project = _project(Path(self.getConfig("root")).resolve())
        page = _Page(md, project.recordings_page)
        md.preprocessors.register(page, "recorded_headers", 40)
        md.treeprocessors.register(_WarnUnread(page), "recorded_unread", 1)
        strict = self.getConfig("strict")
        if isinstance(strict, str):  # from an environment variable via !ENV
            strict = switched_on(strict)
        settings = {"store": project.store, "page": page, "docs": project.docs_dir}
        block_mgr.register(RecordedBlock, {**settings, "renewal": project.renewals[bool(strict)]})
        block_mgr.register(tables.RecordingsBlock, settings)
        block_mgr.register(tables.MachineTableBlock, settings)
        block_mgr.register(tables.TargetSettingsBlock, {})


@dataclass(frozen=True)
class _Project:
    """What every page of one build reads alike."""

    stamp: tuple  #: _stamp(root) when it was read
    store: Store
    docs_dir: Path
    recordings_page: str | None
    #: What must be fresh without and with the release rule, made once so git is asked once.
    renewals: dict[bool, renewal.Renewal]


def _stamp(root: Path) -> tuple:
    """Changes whenever anything a _Project is read from does: a cheap stat of each file, no read."""
    files = [root / "pyproject.toml", root / "mkdocs.yml", root / ".git" / "HEAD", root / ".git" / "index"]
    for folder, pattern in (("recordings", "*.json"), ("docs", "*.md"), ("snippets", "*.py")):
        files += sorted((root / folder).rglob(pattern))
    stats = []
    for file in files:
        with contextlib.suppress(OSError):
            info = file.stat()
            stats.append((str(file), info.st_mtime_ns, info.st_size))
    return tuple(stats)


_projects: dict[Path, _Project] = {}


def _project(root: Path) -> _Project:
    """MkDocs makes a new Markdown, and so a new extension, for every page: the project is
    read once and kept while nothing it is read from changes (as `make serve` rebuilds)."""
    if not (root / "snippets").is_dir():
        raise ValueError(
            f"recorded: no snippets/ folder in {root}; run from the project root or set the extension's root option."
        )
    stamp = _stamp(root)
    if (known := _projects.get(root)) and known.stamp == stamp:
        return known
    store, docs_dir = Store(root), read_site(root).docs_dir
    renewals = {strict: renewal.of(store, strict) for strict in (False, True)}
    _projects[root] = _Project(stamp, store, docs_dir, table_data.recordings_page(docs_dir), renewals)
    return _projects[root]


def makeExtension(**kwargs):
    return RecordedExtension(**kwargs)
