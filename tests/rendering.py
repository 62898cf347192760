"""Pages for the tests to convert, and what a reader sees in the HTML they become.

html = project.render(page(block("lesson/x.py", 'expect:\\n  - "done"\\n')))
(tabs,) = output_tabs(html)          # label -> the HTML inside that tab
assert highlighted(tabs["CPU"]) == ["done"]
"""

from __future__ import annotations

import re


def page(*blocks: str) -> str:
    """A page whose first block header sits on line 3."""
    return "# Page\n\n" + "\n\nSome prose.\n\n".join(blocks) + "\n"


def block(snippet: str = "lesson/x.py", body: str = "") -> str:
    """A ``/// recorded`` block for the snippet, its YAML body as written."""
    return f"/// recorded | {snippet}\n{body}///"


def output_tabs(html: str) -> list[dict[str, str]]:
    """Each recorded block's tabs, label -> the HTML inside that tab."""
    sets = html.split('<div class="tabbed-set tabbed-alternate recorded-outputs"')[1:]
    found = []
    for chunk in sets:
        labels = re.findall(r'<label for="[^"]+">([^<]*)</label>', chunk)
        contents = chunk.split('<div class="tabbed-block">')[1:]
        assert len(labels) == len(contents), chunk
        found.append(dict(zip(labels, contents)))
    return found


def highlighted(tab: str) -> list[str]:
    """The text of the highlighted lines in this HTML, in order."""
    return [
        re.sub(r"<[^>]+>", "", line).strip()
        for line in re.findall(r'<span class="hll">(.*?)</span>', tab, re.DOTALL)
    ]
