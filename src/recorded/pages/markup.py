"""The HTML pieces a recorded block is built from: Material's content tabs, an admonition,
the provenance line, and the code highlighter configured as the page's own fences are.

Every piece escapes what it is given: recorded text is never markup. Text for an element
built with ElementTree goes through ``element_text``, an AtomicString, which the serializer
escapes and Python-Markdown's inline patterns leave alone (without it, a ``<script>`` in a
table cell would be read again as inline HTML); text inside an HTML string goes through
``escape.html``. Both first show control characters as escapes (``escape.visible``).
"""

from __future__ import annotations

import html as html_
import inspect
from collections.abc import Iterator

from markdown import Markdown
from markdown.util import AtomicString
from pygments.filter import Filter
from pygments.filters import TokenMergeFilter
from pygments.token import Comment, Keyword, Number, Operator, String, Text, _TokenType
from pymdownx.highlight import Highlight

from ..model import escape


def element_text(value: object) -> AtomicString:
    """A value as the text of an element: shown as written, never read as Markdown or HTML."""
    return AtomicString(escape.visible(value))


def output_html(lines: list[str], claimed: list[int], notes: dict[int, str] | None = None) -> str:
    """What a run printed, as a code block without syntax colouring (one text node a line,
    not a span a token): the ``claimed`` lines (1-based) marked as Material marks
    highlighted lines, and a quiet note after the lines in ``notes``. Without a copy button:
    the code is what a reader copies. ``lines`` are already made visible (escape.visible)."""
    notes = notes or {}
    shown = []
    for number, line in enumerate(lines, 1):
        text = html_.escape(line, quote=False)
        if number in notes:
            text += f'<span class="recorded-runs">  {html_.escape(notes[number], quote=False)}</span>'
        shown.append(f'<span class="hll">{text}\n</span>' if number in claimed else text + "\n")
    return f'<div class="language-text highlight recorded-output no-copy"><pre><code>{"".join(shown)}</code></pre></div>'


def admonition(kind: str, title: str, body: str) -> str:
    """An admonition: ``title`` is escaped here; ``body`` is HTML its caller escaped."""
    return (
        f'<div class="admonition {kind}"><p class="admonition-title">{escape.html(title)}</p>'
        f"<p>{body}</p></div>"
    )


def tabbed(name: str, tabs: list[tuple[str, str]]) -> str:
    """Material's content tabs, in pymdownx.tabbed's alternate markup."""
    checked = ['checked="checked" '] + [""] * (len(tabs) - 1)
    inputs = "".join(
        f'<input {checked[i]}id="{name}_{i + 1}" name="{name}" type="radio" />' for i in range(len(tabs))
    )
    labels = "".join(f'<label for="{name}_{i + 1}">{escape.html(t)}</label>' for i, (t, _) in enumerate(tabs))
    blocks_ = "".join(f'<div class="tabbed-block">{content}</div>' for _, content in tabs)
    return (
        f'<div class="tabbed-set tabbed-alternate recorded-outputs" data-tabs="{name}:{len(tabs)}">'
        f'{inputs}<div class="tabbed-labels">{labels}</div>'
        f'<div class="tabbed-content">{blocks_}</div></div>'
    )


class Light(Filter):
    """Code in five colours: comments, docstrings, strings, keywords and numbers; every other
    token (names, brackets, operators, spaces) plain text. Each coloured token is an element
    on the page, and the browser lays out and styles every one: a page of examples with a
    span per token (2,700 elements on the measure page) spent over a second of a phone's
    time on style and layout. With runs of one kind merged after it (``TokenMergeFilter``)
    an example's code has a fifth of the spans and still reads as Python."""

    KEPT = (String.Doc, Comment, String, Keyword, Operator.Word, Number)

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self._shown: dict[_TokenType, _TokenType] = {}  # a token type and how it is shown

    def shown(self, kind: _TokenType) -> _TokenType:
        if kind not in self._shown:
            kept = next((k for k in self.KEPT if kind in k), None)
            self._shown[kind] = Keyword if kept is Operator.Word else kept or Text
        return self._shown[kind]

    def filter(self, lexer, stream: Iterator[tuple[_TokenType, str]]) -> Iterator[tuple[_TokenType, str]]:
        for kind, value in stream:
            yield self.shown(kind), value


#: The lexer options an example's code is highlighted with (the notebook page, lighter still,
#: colours only comments and docstrings: overrides/hooks/notebook_page.py).
LIGHT = {"filters": [Light(), TokenMergeFilter()]}


def highlighter(md: Markdown) -> Highlight:
    """pymdownx.highlight configured as the page's fences are, so the code looks the same,
    in ``Light``'s five colours."""
    for ext in md.registeredExtensions:
        if hasattr(ext, "get_pymdownx_highlight_settings"):
            settings = ext.get_pymdownx_highlight_settings()
            accepted = inspect.signature(Highlight).parameters
            options = {k: v for k, v in settings.items() if k in accepted and k != "md"}
            break
    else:
        options = {}
    options["extend_pygments_lang"] = [
        *(options.get("extend_pygments_lang") or []),
        {"name": "python", "lang": "python", "options": LIGHT},
    ]
    return Highlight(md, **options)


#: Highlighted code by everything it depends on: `make serve` rebuilds every page on every
#: save, and an example's code is the same from one rebuild to the next.
_highlighted: dict[tuple, str] = {}


def highlight(md: Markdown, src: str, language: str, *, title: str | None, count: int, classes: str) -> str:
    """``src`` as the page's fences would show it (``highlighter``); ``count`` numbers the
    page's code blocks, ``classes`` are added to the block's own."""
    settings = next(
        (
            repr(ext.get_pymdownx_highlight_settings())
            for ext in md.registeredExtensions
            if hasattr(ext, "get_pymdownx_highlight_settings")
        ),
        "",
    )
    key = (settings, src, language, title, count, classes)
    if key not in _highlighted:
        if len(_highlighted) > 4096:  # a long preview session: start again rather than grow
            _highlighted.clear()
        _highlighted[key] = highlighter(md).highlight(
            src, language, title=title, code_block_count=count, classes=classes.split() or None
        )
    return _highlighted[key]
