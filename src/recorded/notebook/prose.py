"""Material-flavoured Markdown pages, cut into parts and made plain for a notebook.

A page becomes Markdown runs (a new one at each heading) and ``/// recorded`` blocks;
Material-only syntax that Jupyter would show raw becomes plain Markdown: an admonition
(``!!! tip "Title"``) becomes a bold title line and its de-indented body, a collapsed one
(``??? info "Title"``) a closed ``<details>`` as on the site, a figure a one-line note (the notebook stands alone, and the figures live on the
site), a task list a plain list, and a link to another page of the notebook a link
inside it (to a page outside it, the published address, when mkdocs.yml has a site_url).
"""

from __future__ import annotations

import html
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


# --- pages into parts ------------------------------------------------------------------


@dataclass
class Part:
    kind: str  #: "markdown" or "snippet"
    text: str  #: the Markdown lines (raw, converted later), or the snippet's name
    page: str
    line: int = 0  #: the block's header line, for snippets


def page_parts(page: str, text: str, skip: frozenset[str] = frozenset()) -> list[Part]:
    """A page cut into Markdown runs (a new one at each heading) and snippet blocks;
    the sections under a heading in ``skip`` are left out."""
    lines = text.splitlines()
    read = blocks.read(lines)  # the blocks and fences as the site and the tests read them
    found = {b.line: b for b in read.blocks}
    fenced = read.fenced()
    parts: list[Part] = []
    run: list[str] = []
    skipping: int | None = None  # the level of the heading whose section is left out

    def flush() -> None:
        if run and any(line.strip() for line in run) and skipping is None:
            parts.append(Part("markdown", "\n".join(run).strip("\n"), page))
        run.clear()

    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if number in fenced:
            run.append(line)
            continue
        if h := HEADING.match(line):
            flush()
            level = len(h.group(1))
            if skipping is not None and level <= skipping:
                skipping = None
            if skipping is None and h.group(2) in skip:
                skipping = level
            run.append(line)
            continue
        if block := found.get(number):
            if block.problem:
                raise NotebookError(f"{page}:{number}: `/// recorded | {block.argument}`: {block.problem}")
            flush()
            if skipping is None:
                parts.append(Part("snippet", block.argument, page, number))
            number = block.end or len(lines)  # a block with no end has a problem, raised above
            continue
        run.append(line)
    flush()
    return parts


# --- Markdown conversion ---------------------------------------------------------------


@dataclass
class Links:
    """Rewrites links between the notebook's pages into links inside the notebook."""

    site: Site
    included: set[str]
    snippet_anchors: set[str]
    targets: set[str] = field(default_factory=set)  #: anchors some link points at

    @staticmethod
    def page_anchor(page: str) -> str:
        return "page-" + re.sub(
            r"[^a-z0-9]+", "-", PurePosixPath(page).with_suffix("").as_posix().lower()
        ).strip("-")

    def rewrite(self, page: str, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            label, target = m.group("text"), m.group("target")
            if _SCHEME.match(target) or target.startswith("#"):
                return m.group(0)
            path, _, fragment = target.partition("#")
            if not path.endswith(".md"):
                return m.group(0)
            other = (PurePosixPath(page).parent / path).as_posix()
            if other in self.included:
                anchor = fragment if fragment in self.snippet_anchors else self.page_anchor(other)
                self.targets.add(anchor)
                return f"[{label}](#{anchor})"
            url = self.site.url(other, fragment)
            return f"[{label}]({url})" if url else label

        return _LINK.sub(one, text)


def _dedent(lines: list[str], width: int) -> list[str]:
    return [line[width:] if line[:width].strip() == "" else line.lstrip() for line in lines]


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
            continue
        if a := _ADMONITION.match(line):
            indent = len(a.group("indent")) + 4
            body: list[str] = []
            while i < len(lines) and (
                not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= indent
            ):
                body.append(lines[i])
                i += 1
            blank_after = False
            while body and not body[-1].strip():
                body.pop()
                blank_after = True
            title = a.group("title")
            if title is None:
                title = a.group("type").replace("-", " ").capitalize()
            pad = a.group("indent")
            inner = convert_markdown(page, "\n".join(_dedent(body, indent)).strip("\n"), links)
            folded = a.group("marker") == "???"  # closed on the site: closed in the notebook too
            if folded:
                summary = html.escape(_LINK.sub(lambda m: m["text"], title or "Details"))
                out += [(f"{pad}<details><summary><b>{summary}</b></summary>", False), ("", False)]
            elif title:
                out += [(f"{pad}**{links.rewrite(page, title)}**", False), ("", False)]
            out += [(f"{pad}{x}" if x else "", False) for x in inner.split("\n")]
            if folded:
                out += [("", False), (f"{pad}</details>", False)]
            if blank_after:
                out.append(("", False))
            continue
        if _FIGURE_START.match(line):
            figure: list[str] = []
            while i < len(lines) and not _FIGURE_END.match(lines[i]):
                figure.append(lines[i])
                i += 1
            i += 1
            whole = "\n".join(figure)
            image, caption = _IMAGE.search(whole), _CAPTION.search(whole)
            words = [
                c.strip()
                for c in (
                    image.group("alt") if image else "",
                    " ".join(caption.group("caption").split()) if caption else "",
                )
                if c.strip()
            ]
            out.append(("*Figure, shown on the lesson site:* " + " ".join(words), False))
            continue
        out.append((_TASK.sub(lambda t: t.group("lead"), line), True))
    # Links are rewritten over each run of prose lines, so a link that wraps is found too.
    converted: list[str] = []
    run: list[str] = []
    for line, prose in out + [("", False)]:
        if prose:
            run.append(line)
            continue
        if run:
            converted.append(links.rewrite(page, "\n".join(run)))
            run = []
        converted.append(line)
    return "\n".join(converted[:-1])
