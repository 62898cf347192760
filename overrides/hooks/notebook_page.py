"""The notebook page (docs/lesson.ipynb, rendered by mkdocs-jupyter), made light.

mkdocs-jupyter inlines about 570 KB of JupyterLab's CSS and wraps every cell in a
JupyterLab widget tree, and Pygments gives every name and bracket its own <span>: the
page weighed 830 KB with 4,600 elements. This hook keeps what a reader sees there, the
prose, the code and its recorded output, and renders the cells as the site's own code
blocks, so Material styles them (both palettes, copy button) and nothing is inlined:

- the inlined <style> and <script> blocks and the per-cell copy widgets are dropped;
- a Markdown cell becomes its rendered HTML; a code cell a Material code block, its
  outputs plain text blocks after it (without copy buttons: the code is what a reader
  copies, and the output is the recorded one);
- headings keep their ids (and the notebook's own anchors, ``#page-measure``) but lose
  their permalinks, for the reason search leaves the page out (below): a link to a
  section should lead to the lesson page;
- code is highlighted coarsely: comments and docstrings, the prose inside the code, are
  set apart and the rest stays plain (adjacent runs merged), and the same goes for a
  fenced example in a Markdown cell. The limit is 1,500 elements on the page, tested,
  and each highlighted run is one: the lesson's snippets print their own timing rule
  and verdicts now, and highlighting keywords and strings as well cost some 800
  elements. The lesson pages keep full highlighting.

The page is also left out of the search index: every sentence on it is on a lesson page
too, and a hit should lead there once, not twice.

MkDocs hooks are a stand-in for a plugin; Zensical loads neither, and renders no
notebook, so nothing here concerns it.
"""

from __future__ import annotations

import html
import re

from bs4 import BeautifulSoup
from pygments import lex
from pygments.lexers import PythonLexer
from pygments.token import Comment, String

# Coarse token classes, named as Material's stylesheet names them.
CLASSES = [
    (String.Doc, "sd"),
    (Comment, "c"),
]


def is_notebook(page) -> bool:
    return page.file.src_uri.endswith(".ipynb")


def token_class(kind) -> str | None:
    for parent, name in CLASSES:
        if kind in parent:
            return name
    return None


def highlight(code: str) -> str:
    """Python source as HTML spans, one per run of tokens of the same class."""
    runs: list[list] = []
    for kind, text in lex(code, PythonLexer(stripnl=False, ensurenl=False)):
        cls = token_class(kind)
        if text.isspace() and runs and runs[-1][0] is not None:
            cls = runs[-1][0]  # whitespace joins the run it sits in
        if runs and runs[-1][0] == cls:
            runs[-1][1] += text
        else:
            runs.append([cls, text])
    out = []
    for cls, text in runs:
        tail = text[len(text.rstrip()) :] if cls else ""
        body = text[: len(text) - len(tail)] if tail else text
        out.append(
            f'<span class="{cls}">{html.escape(body, quote=False)}</span>{tail}'
            if cls
            else html.escape(text, quote=False)
        )
    return "".join(out)


def code_block(code: str, language: str | None, extra: str = "") -> str:
    if language == "python":
        body, cls = highlight(code), "language-python highlight"
    else:
        body, cls = html.escape(code, quote=False), "language-text highlight"
    return f'<div class="{cls}{extra}"><pre><code>{body}</code></pre></div>'


def lighten(content: str) -> str:
    content = re.sub(r"<(style|script)\b[^>]*>.*?</\1>", "", content, flags=re.DOTALL)
    soup = BeautifulSoup(content, "html.parser")
    notebook = soup.find("div", class_="jp-Notebook")
    if notebook is None:  # not mkdocs-jupyter's HTML: leave it alone
        return content
    parts: list[str] = []
    for cell in notebook.find_all("div", class_="jp-Cell", recursive=False):
        classes: list[str] | str = cell.get("class") or []
        if "jp-MarkdownCell" in classes:
            rendered = cell.find("div", class_="jp-RenderedMarkdown")
            if rendered is None:  # a markdown cell mkdocs-jupyter did not render: nothing to show
                continue
            for link in rendered.find_all("a", class_="anchor-link"):
                link.decompose()
            for example in rendered.find_all("div", class_="highlight"):
                # A fenced example (a >>> session, say), as coarsely as a code cell.
                light = code_block(example.get_text().rstrip("\n"), "python")
                example.replace_with(BeautifulSoup(light, "html.parser"))
            parts.append(rendered.decode_contents())
        elif "jp-CodeCell" in classes:
            source = cell.find("div", class_="highlight-ipynb")
            pre = source.find("pre") if source else None
            code = pre.get_text() if pre else ""
            parts.append(code_block(code.rstrip(), "python"))
            for output in cell.find_all("div", class_="jp-OutputArea-output"):
                stderr = output.get("data-mime-type") == "application/vnd.jupyter.stderr"
                text = output.get_text().strip("\n")
                extra = " notebook-output no-copy" + (" notebook-stderr" if stderr else "")
                parts.append(code_block(text, None, extra))
        else:  # a raw cell, which the lesson's notebook has none of
            parts.append(str(cell))
    return '<div class="notebook">\n' + "\n".join(parts) + "\n</div>\n"


def on_page_content(html_: str, page, config, files):
    if not is_notebook(page):
        return html_
    page.meta.setdefault("search", {})["exclude"] = True
    return lighten(html_)
