"""The HTML pieces a recorded block is built from: Material's content tabs, an admonition, the
output, and the code highlighter configured as the page's own fences are.

Every piece escapes what it is given: recorded text is never markup. ElementTree text goes
through ``element_text``, an AtomicString (without it, Python-Markdown's inline patterns would
read a ``<script>`` in a table cell again as HTML); text in an HTML string through
``escape.html``. Both first show control characters as escapes (``escape.visible``).
"""

from __future__ import annotations

import functools
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
    """What a run printed, uncoloured, without a copy button (the code is what a reader copies):
    the ``claimed`` lines (1-based) marked as Material marks highlighted lines, a quiet note after
    the lines in ``notes``. Each line is made visible (escape.visible), then HTML-escaped."""
    notes = notes or {}
    shown = []
    for number, line in enumerate(lines, 1):
        text = html_.escape(escape.visible(line), quote=False)
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
    inputs = labels = ""
    for i, (tab, _) in enumerate(tabs, 1):
        checked = 'checked="checked" ' if i == 1 else ""
        inputs += f'<input {checked}id="{name}_{i}" name="{name}" type="radio" />'
        labels += f'<label for="{name}_{i}">{escape.html(tab)}</label>'
    blocks_ = "".join(f'<div class="tabbed-block">{content}</div>' for _, content in tabs)
    return (
        f'<div class="tabbed-set tabbed-alternate recorded-outputs" data-tabs="{name}:{len(tabs)}">'
        f'{inputs}<div class="tabbed-labels">{labels}</div>'
        f'<div class="tabbed-content">{blocks_}</div></div>'
    )


class Light(Filter):
    """Code in five colours (comments, docstrings, strings, keywords, numbers), every other token
    plain: a span per token (2,700 on the measure page) cost a phone over a second of style and
    layout; with runs merged (``TokenMergeFilter``) there are a fifth as many."""

    def filter(self, lexer, stream: Iterator[tuple[_TokenType, str]]) -> Iterator[tuple[_TokenType, str]]:
        for kind, value in stream:
            yield _shown(kind), value


@functools.cache
def _shown(kind: _TokenType) -> _TokenType:
    """How a token type is shown: as the first of Light's kinds it falls under, or as plain text."""
    kept = next((k for k in (String.Doc, Comment, String, Keyword, Operator.Word, Number) if kind in k), None)
    return Keyword if kept is Operator.Word else kept or Text


#: The lexer options an example's code is highlighted with (the notebook page, lighter still,
#: colours only comments and docstrings: overrides/hooks/notebook_page.py).
LIGHT = {"filters": [Light(), TokenMergeFilter()]}


#: Highlighted code by everything it depends on: `make serve` rebuilds every page on every
#: save, and an example's code is the same from one rebuild to the next.
_highlighted: dict[tuple, str] = {}


def highlight(md: Markdown, src: str, language: str, *, title: str | None, count: int, classes: str) -> str:
    """``src`` as the page's fences would show it (pymdownx.highlight as they configure it), in
    ``Light``'s colours; ``count`` numbers the page's code blocks, ``classes`` add to the block's."""
    name = "get_pymdownx_highlight_settings"  # on the extension that configures the fences
    settings: dict = next((getattr(ext, name)() for ext in md.registeredExtensions if hasattr(ext, name)), {})
    key = (repr(settings), src, language, title, count, classes)
    if key not in _highlighted:
        if len(_highlighted) > 4096:  # a long preview session: start again rather than grow
            _highlighted.clear()
        accepted = inspect.signature(Highlight).parameters
        options = {k: v for k, v in settings.items() if k in accepted and k != "md"}
        python = {"name": "python", "lang": "python", "options": LIGHT}
        options["extend_pygments_lang"] = [*(options.get("extend_pygments_lang") or []), python]
        _highlighted[key] = Highlight(md, **options).highlight(
            src, language, title=title, code_block_count=count, classes=classes.split() or None
        )
    return _highlighted[key]
