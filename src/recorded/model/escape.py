"""Text from a recording or a bundle, made safe to show: the one path every report, page and
table takes. A program the project does not control wrote it: shown raw, a control character
rewrites the reader's terminal (``ESC]0;`` retitles it), a bidirectional override reorders what a
reviewer reads, and a ``<`` opens markup. Standard library only."""

from __future__ import annotations

import html as html_
import re
from typing import TextIO

#: C0 controls but tab and newline, DEL, C1 controls, and the Unicode bidirectional controls.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What Markdown reads as syntax inside a line: emphasis, code, links, HTML, tables, strikeout.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|~])")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, newlines: bool = True) -> str:
    """``text`` with its control characters shown as escapes; with ``newlines`` False, a
    newline too (for a value that must stay on one line)."""
    shown = _CONTROL.sub(_escape, str(text))
    return shown if newlines else shown.replace("\n", "\\n")


def html(text: object) -> str:
    """Visible, then HTML-escaped (quotes too, so it may fill an attribute)."""
    return html_.escape(visible(text))


def markdown(text: object) -> str:
    """Markdown prose inside a line that renders as written: visible, one line, ``&`` escaped,
    and every character Markdown reads as syntax there backslash-escaped."""
    return _MARKDOWN.sub(r"\\\1", visible(text, newlines=False)).replace("&", "&amp;")


class SafeStream:
    """A text stream that shows control characters as escapes: no recorded text reaches the terminal raw."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
