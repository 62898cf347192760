"""A page cut into parts (Markdown runs, a new one at each heading, and ``/// recorded`` blocks), and
Material-only syntax made plain for Jupyter: an admonition a bold title and its body (a collapsed one a
closed ``<details>``, as on the site), a figure a one-line note, a task list a plain list, and a link
to a page of the notebook a link inside it (to another page, the published address, if any).
"""

from __future__ import annotations

import html
import itertools
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..pages import blocks
from ..pages.site import Site

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_ADMONITION = re.compile(
    r'^(?P<indent>[ \t]*)(?P<marker>!!!|\?\?\?\+?)[ \t]+(?P<type>[\w-]+)(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$'
)
_FIGURE_START = re.compile(r"^[ \t]*<figure\b[^>]*>[ \t]*$")
_FIGURE_END = re.compile(r"^[ \t]*</figure>[ \t]*$")
_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)")
_CAPTION = re.compile(r"<figcaption>(?P<caption>.*?)</figcaption>", re.DOTALL)
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")
_TASK = re.compile(r"^(?P<lead>[ \t]*[-*+][ \t]+)\[[ xX]\][ \t]+")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


class NotebookError(ValueError):
    """The pages or mkdocs.yml cannot be turned into a notebook; the message says why."""


@dataclass
class Part:
    kind: str  #: "markdown" or "snippet"
    text: str  #: the Markdown lines (raw, converted later), or the snippet's name
    page: str
    line: int = 0  #: the block's header line, for snippets


def page_parts(page: str, text: str, skip: frozenset[str] = frozenset()) -> list[Part]:
    """A page cut into parts, leaving out the sections under a heading in ``skip``."""
    lines = text.splitlines()
    read = blocks.read(lines)  # the blocks and fences as the site and the tests read them
    found, fenced = {b.line: b for b in read.blocks}, read.fenced()
    parts: list[Part] = []
    run: list[str] = []
    skipping: int | None = None  # the level of the heading whose section is left out
    end = 0  # the last line of the block last read

    def flush() -> None:
        if any(line.strip() for line in run) and skipping is None:
            parts.append(Part("markdown", "\n".join(run).strip("\n"), page))
        run.clear()

    for number, line in enumerate(lines, 1):
        if number <= end:
            continue
        if number not in fenced and (h := HEADING.match(line)):
            flush()
            if skipping is not None and len(h.group(1)) <= skipping:
                skipping = None
            if skipping is None and h.group(2) in skip:
                skipping = len(h.group(1))
        elif number not in fenced and (block := found.get(number)):
            if block.problem:
                raise NotebookError(f"{page}:{number}: `/// recorded | {block.argument}`: {block.problem}")
            flush()
            if skipping is None:
                parts.append(Part("snippet", block.argument, page, number))
            end = block.end or len(lines)  # a block with no end has a problem, raised above
            continue
        run.append(line)
    flush()
    return parts


def anchor_heading(text: str, anchor: str) -> str:
    """Put an anchor in a page's first heading, so that links to the page land on it."""
    first, _, rest = text.partition("\n")
    h = HEADING.match(first)
    first = f'{h.group(1)} <a id="{anchor}"></a>{h.group(2)}' if h else f'<a id="{anchor}"></a>\n\n{first}'
    return f"{first}\n{rest}" if rest else first


def merge_markdown(cells: list) -> list:
    """Join a Markdown cell into the one before it unless it starts with a heading."""
    merged: list = []
    for cell in cells:
        joins = merged and merged[-1].cell_type == cell.cell_type == "markdown"
        if joins and not HEADING.match(cell.source.split("\n", 1)[0]):
            merged[-1].source = merged[-1].source.rstrip("\n") + "\n\n" + cell.source
        else:
            merged.append(cell)
    return merged


@dataclass
class Links:
    """Rewrites links between the notebook's pages into links inside the notebook."""

    site: Site
    included: set[str]
    snippet_anchors: set[str]
    targets: set[str] = field(default_factory=set)  #: anchors some link points at

    @staticmethod
    def page_anchor(page: str) -> str:
        return "page-" + blocks.anchor(page.removesuffix(".md"))

    def rewrite(self, page: str, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            label, target = m.group("text"), m.group("target")
            path, _, fragment = target.partition("#")
            if _SCHEME.match(target) or not path.endswith(".md"):  # a page's own anchors too
                return m.group(0)
            other = (PurePosixPath(page).parent / path).as_posix()
            if other in self.included:
                anchor = fragment if fragment in self.snippet_anchors else self.page_anchor(other)
                self.targets.add(anchor)
                return f"[{label}](#{anchor})"
            url = self.site.url(other, fragment)
            return f"[{label}]({url})" if url else label

        return _LINK.sub(one, text)


def convert_markdown(page: str, text: str, links: Links) -> str:
    """Material's Markdown made plain, for Jupyter: admonitions, figures, task lists, links."""
    lines = text.split("\n")
    out: list[tuple[str, bool]] = []  # each line, and whether it is prose whose links to rewrite
    fenced = blocks.read(lines).fenced()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if i in fenced:
            out.append((line, False))
        elif a := _ADMONITION.match(line):
            made, i = _admonition(a, lines, i, page, links)
            out += [(x, False) for x in made]
        elif _FIGURE_START.match(line):
            end = next((j for j in range(i, len(lines)) if _FIGURE_END.match(lines[j])), len(lines))
            whole = "\n".join(lines[i:end])
            image, caption = _IMAGE.search(whole), _CAPTION.search(whole)
            alt = image.group("alt").strip() if image else ""
            said = " ".join(caption.group("caption").split()) if caption else ""
            out.append(("*Figure, shown on the lesson site:* " + " ".join(filter(None, (alt, said))), False))
            i = end + 1
        else:
            out.append((_TASK.sub(lambda t: t.group("lead"), line), True))
    # Links are rewritten over each run of prose lines, so a link that wraps is found too.
    converted: list[str] = []
    for prose, group in itertools.groupby(out, key=lambda item: item[1]):
        run = [line for line, _ in group]
        converted += [links.rewrite(page, "\n".join(run))] if prose else run
    return "\n".join(converted)


def _admonition(a: re.Match[str], lines: list[str], i: int, page: str, links: Links) -> tuple[list[str], int]:
    """The admonition whose header ``a`` matched and body starts at ``lines[i]``, made plain; the next i."""
    pad, indent = a["indent"], len(a["indent"]) + 4
    body: list[str] = []
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= indent):
        body.append(lines[i])
        i += 1
    blank_after = bool(body) and not body[-1].strip()
    while body and not body[-1].strip():
        body.pop()
    title = a["title"] if a["title"] is not None else a["type"].replace("-", " ").capitalize()
    dedented = [line[indent:] if line[:indent].strip() == "" else line.lstrip() for line in body]
    inner = [
        f"{pad}{x}" if x else ""
        for x in convert_markdown(page, "\n".join(dedented).strip("\n"), links).split("\n")
    ]
    if a["marker"] == "???":  # closed on the site: closed in the notebook too
        summary = html.escape(_LINK.sub(lambda m: m["text"], title or "Details"))
        out = [f"{pad}<details><summary><b>{summary}</b></summary>", "", *inner, "", f"{pad}</details>"]
    else:
        out = [f"{pad}**{links.rewrite(page, title)}**", "", *inner] if title else inner
    return out + [""] * blank_after, i
