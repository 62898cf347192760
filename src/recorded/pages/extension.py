"""A Python-Markdown extension that renders ``/// recorded | snippet`` blocks.

Each block becomes the snippet's code (titled with its path, metadata header hidden)
followed by one tab per target: the recorded output with the claimed lines
highlighted and a provenance line, or a plain statement of why there is none.
It reads recordings and never runs a snippet. Problems are logged as warnings on the
``mkdocs`` logger, which ``mkdocs build --strict`` turns into a failed build, and are
shown in the page as well.

It is a Markdown extension rather than an MkDocs hook so that Zensical, which reads the
same mkdocs.yml but not MkDocs hooks, renders the pages the same way.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as etree
from dataclasses import dataclass
from pathlib import Path

from markdown import Markdown
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from pymdownx.blocks import BlocksExtension
from pymdownx.blocks.block import Block

from ..model import escape, renewal
from ..model.snippets import SnippetError, load
from ..model.store import Store
from . import blocks, example, inventory, markup, tables
from .site import read_site

log = logging.getLogger("mkdocs.extensions.recorded")


class _Visible(logging.Filter):
    """A warning may quote a recording (the nearest printed line): its control characters
    reach the terminal as escapes."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = escape.visible(record.getMessage()), None
        return True


log.addFilter(_Visible())


class _Page:
    """What the extension knows about the page being converted."""

    def __init__(self, md: Markdown, recordings_page: str | None = None):
        self.md = md
        self.recordings_page = recordings_page
        self.blocks: tuple[blocks.Found, ...] = ()  # as blocks.read finds them, nested ones too
        self.read: set[int] = set()
        self.lines: list[str] = []  # the page's Markdown, for the line of a block

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

    def claim(self, argument: str) -> int | None:
        """The header of the block being read: the first unread one naming the same snippet.

        Matched by snippet, not by position, because pymdownx.blocks silently drops a block it
        cannot parse, and matching by position would then pin every later block to the wrong line.
        """
        for index, found in enumerate(self.blocks):
            if index not in self.read and found.argument == argument:
                self.read.add(index)
                return index
        return None

    def where(self, index: int | None) -> str:
        line = self.blocks[index].line if index is not None else "?"
        return f"{self.name}:{line}"

    def link_to_machine(self, anchor: str) -> str | None:
        """The URL, from this page, of a machine's description on the recordings page (the
        page holding a ``/// recordings`` block); None in a site without one."""
        return self.url_of(self.recordings_page, anchor) if self.recordings_page else None

    def url_of(self, src_uri: str, fragment: str = "") -> str:
        """A page's URL relative to this one, as MkDocs would write a Markdown link to it."""
        relpath = self._relpath()
        here = getattr(getattr(relpath, "file", None), "url", None)
        files = getattr(relpath, "files", None)
        there = files.get_file_from_path(src_uri) if files is not None else None
        if here is not None and there is not None:
            from mkdocs.utils import get_relative_url

            url = get_relative_url(there.url, here)
        else:  # not MkDocs: directory URLs, the common default
            depth = self.name.count("/") + (0 if self.name.endswith("index.md") else 1)
            target = "" if src_uri == "index.md" else src_uri.removesuffix(".md") + "/"
            url = "../" * depth + target
        return url + (f"#{fragment}" if fragment else "")

    def _relpath(self):
        try:
            return self.md.treeprocessors["relpath"]
        except KeyError:  # a Markdown Registry has no .get
            return None


class _FindHeaders(Preprocessor):
    def __init__(self, md: Markdown, page: _Page):
        super().__init__(md)
        self.page = page

    def run(self, lines: list[str]) -> list[str]:
        self.page.blocks, self.page.read, self.page.lines = blocks.read(lines).blocks, set(), lines
        return lines


class _CheckAllRead(Treeprocessor):
    """pymdownx.blocks skips a block it cannot parse without a word: say so."""

    def __init__(self, md: Markdown, page: _Page):
        super().__init__(md)
        self.page = page

    def run(self, root: etree.Element) -> None:
        for index, found in enumerate(self.page.blocks):
            if index in self.page.read:
                continue
            if found.problem:  # nested or never closed: say that, the reason every reader shares
                log.warning(
                    f"{self.page.name}:{found.line}: `/// recorded | {found.argument}`: {found.problem}"
                )
                continue
            log.warning(
                f"{self.page.name}:{found.line}: `/// recorded | {found.argument}` was not read as a block. "
                "Write its claims unindented between the header and the closing `///` line, "
                "with nothing after the snippet path on the header."
            )


class RecordedBlock(Block):
    NAME = blocks.NAME
    ARGUMENT = None  # checked in on_end, so a missing path gets a message, not silence

    def on_markdown(self) -> str:
        return "raw"

    def on_create(self, parent: etree.Element) -> etree.Element:
        return etree.SubElement(parent, "div", {"class": "recorded"})

    def on_end(self, block: etree.Element) -> None:
        page: _Page = self.config["page"]
        index = page.claim((self.argument or "").strip())
        problem = blocks.NESTED if index is None else page.blocks[index].problem
        if problem:
            # The tests and the notebook read closed blocks at the left margin only (blocks.read):
            # shown here, its claims would go untested, so the build says so.
            log.warning(f"{page.where(index)}: `/// recorded | {self.argument or ''}`: {problem}")
        body, block.text = str(block.text or ""), None
        for child in list(block):
            block.remove(child)
        store: Store = self.config["store"]
        where = page.where(index)
        try:
            first = page.blocks[index].line + 1 if index is not None else None
            spec = blocks.parse(self.argument, body, store.targets.names, first)
            snippet = load(store.snippets_dir, spec.snippet, store.targets)
            block.set("id", blocks.anchor(snippet.name))  # so other pages can link to the evidence
            ctx = example.Context(
                store,
                where,
                self.config["renewal"],
                self.highlight,
                page.link_to_machine,
                store.settings.commands.record,
            )
            count = self.tracker.setdefault("count", 0)
            self.tracker["count"] = count + 1
            shown = example.render(spec, snippet, ctx, count)
            for message in ctx.problems:
                log.warning(f"{where}: {message}")
        except (blocks.BlockError, SnippetError) as exc:
            problem = str(exc)
            if isinstance(exc, SnippetError):
                problem = blocks.snippet_problem(exc, store.snippets_dir, self.argument or "")
            message = f"{where}: recorded block: {problem}"
            log.warning(message)
            shown = markup.admonition("failure", "This block could not be shown", escape.html(message))
        block.text = self.md.htmlStash.store(shown)

    def highlight(self, src: str, language: str, title: str | None = None, extra: str = "") -> str:
        count = self.tracker.setdefault("code", 0)
        self.tracker["code"] = count + 1
        return markup.highlight(self.md, src, language, title=title, count=count, classes=extra)


class RecordedExtension(BlocksExtension):
    def __init__(self, **kwargs):
        self.config = {
            "root": [".", "Project folder holding snippets/ and recordings/ (default: the current one)"],
            "strict": [
                False,
                (
                    "Also warn about recordings of targets that pyproject.toml does not "
                    "mark required that are missing, stale or failed (the release rule)"
                ),
            ],
        }
        super().__init__(**kwargs)

    def extendMarkdownBlocks(self, md: Markdown, block_mgr) -> None:
        project = _project(Path(self.getConfig("root")).resolve())
        page = _Page(md, project.recordings_page)
        md.preprocessors.register(_FindHeaders(md, page), "recorded_headers", 40)
        md.treeprocessors.register(_CheckAllRead(md, page), "recorded_check", 1)
        strict = self.getConfig("strict")
        if isinstance(strict, str):  # from an environment variable via !ENV
            strict = strict.strip().lower() in ("1", "true", "yes", "on")
        block_mgr.register(
            RecordedBlock,
            {
                "store": project.store,
                "page": page,
                "renewal": project.renewals[bool(strict)],
            },
        )
        settings = {"store": project.store, "page": page, "docs": project.docs_dir}
        block_mgr.register(tables.RecordingsBlock, settings)
        block_mgr.register(tables.MachineTableBlock, settings)
        block_mgr.register(tables.TargetSettingsBlock, {})


@dataclass(frozen=True)
class _Project:
    """What every page of one build reads alike: the store, the site's layout, and what must be
    fresh here (the kinds of machine this one is, those with any recording, the snippets
    changed in this working tree)."""

    store: Store
    docs_dir: Path
    recordings_page: str | None
    #: What must be fresh, without and with the release rule: one of each per build, so
    #: that git is asked at most once, and only if a recording here is not fresh.
    renewals: dict[bool, renewal.Renewal]


def _stamp(root: Path) -> tuple:
    """Changes whenever anything a _Project is read from does: the configuration, a page, a
    snippet or a recording is added, removed or saved, or a commit is made (a cheap stat of
    each, no read)."""
    files = [root / "pyproject.toml", root / "mkdocs.yml", root / ".git" / "HEAD", root / ".git" / "index"]
    for folder, pattern in (("recordings", "*.json"), ("docs", "*.md"), ("snippets", "*.py")):
        files += sorted((root / folder).rglob(pattern))
    stats = []
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue
        stats.append((str(file), info.st_mtime_ns, info.st_size))
    return tuple(stats)


_projects: dict[Path, tuple[tuple, _Project]] = {}


def _project(root: Path) -> _Project:
    """MkDocs makes a new Markdown, and so a new extension, for every page: the project is
    read once and kept while nothing it is read from changes (as `make serve` rebuilds)."""
    if not (root / "snippets").is_dir():
        raise ValueError(
            f"recorded: no snippets/ folder in {root}; run from the project root or set the extension's root option."
        )
    stamp = _stamp(root)
    known = _projects.get(root)
    if known and known[0] == stamp:
        return known[1]
    store = Store(root)
    docs_dir = read_site(root).docs_dir
    project = _Project(
        store=store,
        docs_dir=docs_dir,
        recordings_page=inventory.recordings_page(docs_dir),
        renewals={strict: renewal.of(store, strict) for strict in (False, True)},
    )
    _projects[root] = (stamp, project)
    return project


def makeExtension(**kwargs):
    return RecordedExtension(**kwargs)
