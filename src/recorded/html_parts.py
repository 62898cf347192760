"""The HTML pieces a recorded block is built from: Material's content tabs, an admonition,
the provenance line, and the code highlighter configured as the page's own fences are.

Every piece escapes what it is given: recorded text is never markup.
"""

from __future__ import annotations

import html
import inspect

from markdown import Markdown
from pymdownx.highlight import Highlight

from . import describe


def provenance(rec, target) -> str:
    return f'<p class="recorded-provenance">{html.escape(describe.provenance(rec, target.description))}</p>'


def admonition(kind: str, title: str, text: str) -> str:
    return (
        f'<div class="admonition {kind}"><p class="admonition-title">{html.escape(title)}</p>'
        f"<p>{text}</p></div>"
    )


def tabbed(name: str, tabs: list[tuple[str, str]]) -> str:
    """Material's content tabs, in pymdownx.tabbed's alternate markup."""
    checked = ['checked="checked" '] + [""] * (len(tabs) - 1)
    inputs = "".join(
        f'<input {checked[i]}id="{name}_{i + 1}" name="{name}" type="radio" />' for i in range(len(tabs))
    )
    labels = "".join(f'<label for="{name}_{i + 1}">{html.escape(t)}</label>' for i, (t, _) in enumerate(tabs))
    blocks_ = "".join(f'<div class="tabbed-block">{content}</div>' for _, content in tabs)
    return (
        f'<div class="tabbed-set tabbed-alternate recorded-outputs" data-tabs="{name}:{len(tabs)}">'
        f'{inputs}<div class="tabbed-labels">{labels}</div>'
        f'<div class="tabbed-content">{blocks_}</div></div>'
    )


def highlighter(md: Markdown) -> Highlight:
    """pymdownx.highlight configured as the page's fences are, so the code looks the same."""
    for ext in md.registeredExtensions:
        if hasattr(ext, "get_pymdownx_highlight_settings"):
            settings = ext.get_pymdownx_highlight_settings()
            accepted = inspect.signature(Highlight).parameters
            return Highlight(md, **{k: v for k, v in settings.items() if k in accepted and k != "md"})
    return Highlight(md)
