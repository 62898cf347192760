"""The HTML pieces a recorded block is built from: Material's content tabs, an admonition, the
output, and the code highlighter configured as the page's own fences are. Every piece escapes
what it is given, its control characters shown as escapes (``escape.visible``) first.
"""

from __future__ import annotations

import functools
import html as html_
import inspect
from collections.abc import Iterator

from markdown import Markdown
from pygments.filter import Filter
from pygments.filters import TokenMergeFilter
from pygments.token import Comment, Keyword, Number, Operator, String, Text, _TokenType
from pymdownx.highlight import Highlight

from ..model import escape


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


def admonition(kind: str, title: str, body: str, tag: str = "p") -> str:
    """An admonition: ``title`` is escaped here; ``body``, in a ``tag``, is HTML its caller escaped."""
    title = f'<p class="admonition-title">{escape.html(title)}</p>'
    return f'<div class="admonition {kind}">{title}<{tag}>{body}</{tag}></div>'


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
    layout; with runs merged (``TokenMergeFilter``) there are a fifth as many. (The notebook page
    colours only comments and docstrings: overrides/hooks/notebook_page.py.)"""

    def filter(self, lexer, stream: Iterator[tuple[_TokenType, str]]) -> Iterator[tuple[_TokenType, str]]:
        return ((_shown(kind), value) for kind, value in stream)


@functools.cache
def _shown(kind: _TokenType) -> _TokenType:
    """How a token type is shown: as the first of Light's kinds it falls under, or as plain text."""
    kept = next((k for k in (String.Doc, Comment, String, Keyword, Operator.Word, Number) if kind in k), None)
    return Keyword if kept is Operator.Word else kept or Text


#: Highlighted code by all it depends on: `make serve` rebuilds every page on every save.
_highlighted: dict[tuple, str] = {}


def highlight(md: Markdown, src: str, *, title: str | None, count: int, classes: str) -> str:
    """Python ``src`` as the page's fences would show it (pymdownx.highlight as they configure it),
    in ``Light``'s colours; ``count`` numbers the page's code blocks, ``classes`` add to the block's."""
    name = "get_pymdownx_highlight_settings"  # on the extension that configures the fences
    settings: dict = next((getattr(ext, name)() for ext in md.registeredExtensions if hasattr(ext, name)), {})
    key = (repr(settings), src, title, count, classes)
    if key not in _highlighted:
        if len(_highlighted) > 4096:  # a long preview session: start again rather than grow
            _highlighted.clear()
        accepted = inspect.signature(Highlight).parameters
        options = {k: v for k, v in settings.items() if k in accepted and k != "md"}
        python = {"name": "python", "lang": "python", "options": {"filters": [Light(), TokenMergeFilter()]}}
        options["extend_pygments_lang"] = [*(options.get("extend_pygments_lang") or []), python]
        _highlighted[key] = Highlight(md, **options).highlight(
            src, "python", title=title, code_block_count=count, classes=classes.split() or None
        )
    return _highlighted[key]
