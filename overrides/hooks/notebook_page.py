"""The notebook pages (docs/lesson.ipynb): rendered by mkdocs-jupyter's converter, made
light, and cached by their input.

This hook does for the site what the mkdocs-jupyter plugin would (a notebook in the nav is
a page with a download button, its .ipynb copied beside it) without loading the plugin:
the plugin imports nbconvert and JupyterLab's templates at start-up, two thirds of a second
of every build and every `make serve` start, and the page it converts is then re-parsed
to lighten it, another half second, even when the notebook has not changed. Here the
light page is kept in .cache/notebook-pages/, keyed by the notebook's bytes, this file
and the converter's version, and mkdocs-jupyter's converter runs only on a miss: after a
prose edit, or any build of an unchanged notebook, the page costs a file read.

Made light: mkdocs-jupyter inlines about 570 KB of JupyterLab's CSS and wraps every cell
in a JupyterLab widget tree, and Pygments gives every name and bracket its own <span>: the
page weighed 830 KB with 4,600 elements. What a reader sees there is kept, the prose,
the code and its recorded output, rendered as the site's own code blocks, so Material
styles them (both palettes, copy button) and nothing is inlined:

- the inlined <style> and <script> blocks and the per-cell copy widgets are dropped;
- a Markdown cell becomes its rendered HTML; a code cell a Material code block, its
  outputs plain text blocks after it (without copy buttons: the code is what a reader
  copies, and the output is the recorded one);
- headings keep their ids (and the notebook's own anchors, ``#page-measure``) but lose
  their permalinks, for the reason search leaves the page out (below): a link to a
  section should lead to the lesson page; the table of contents lists every part (h1),
  not only the first part's sections;
- code is highlighted coarsely: comments and docstrings, the prose inside the code, are
  set apart and the rest stays plain (adjacent runs merged), and the same goes for a
  fenced example in a Markdown cell. The limit is 1,500 elements on the page, tested,
  and each highlighted run is one. The lesson pages keep full highlighting.

The page is also left out of the search index: every sentence on it is on a lesson page
too, and a hit should lead there once, not twice.

Zensical loads no MkDocs hook and renders no notebook, so nothing here concerns it.
"""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
import shutil
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path

from mkdocs.structure.files import File, Files
from mkdocs.structure.toc import get_toc
from pygments import lex
from pygments.lexers import PythonLexer
from pygments.token import Comment, String

# Builds may run side by side (the tests do): a reader sees the old entry or the new.
from recorded.model.files import write_atomically

#: Under the project root, ignored by git; entries not used by a build are removed after it.
CACHE = Path(".cache") / "notebook-pages"
#: What the converted page depends on besides the notebook: the converter and this file.
CONVERTERS = ("mkdocs-jupyter", "nbconvert")


# Coarse token classes, named as Material's stylesheet names them.
CLASSES = [
    (String.Doc, "sd"),
    (Comment, "c"),
]


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
    """Code as Material's code block; text (an output) as a bare <pre>, one element fewer a
    cell, which Material styles alike."""
    if language == "python":
        return (
            f'<div class="language-python highlight{extra}"><pre><code>{highlight(code)}</code></pre></div>'
        )
    return f'<pre class="{extra.strip()}"><code>{html.escape(code, quote=False)}</code></pre>'


def lighten(content: str) -> str:
    from bs4 import BeautifulSoup  # only when the notebook changed

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


class NotebookFile(File):
    """A notebook in docs/, published as a page (lesson/index.html) rather than copied."""

    def is_documentation_page(self) -> bool:
        return True


def is_notebook(file: File) -> bool:
    return file.src_uri.endswith(".ipynb")


class _Headings(HTMLParser):
    """The light page's parts (its h1s) as MkDocs' table of contents tokens, at level 2 so
    that Material lists them all rather than the sections of the first part only, which it
    would take for the page's title. Sections (h2) are left out: the notebook repeats the
    lesson, and its parts are what a reader jumps between."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        anchor = dict(attrs).get("id")
        if tag == "h1" and anchor:
            self._open = {"level": 2, "id": anchor, "name": "", "children": []}

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open["name"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1" and self._open is not None:
            self._open["name"] = " ".join(self._open["name"].split())
            self.tokens.append(self._open)
            self._open = None


def toc_tokens(content: str) -> list[dict]:
    parser = _Headings()
    parser.feed(content)
    return parser.tokens


def cache_key(notebook: Path) -> str:
    digest = hashlib.sha256(notebook.read_bytes())
    digest.update(Path(__file__).read_bytes())
    for name in CONVERTERS:
        digest.update(f"{name}=={metadata.version(name)}".encode())
    return digest.hexdigest()


def convert(notebook: Path) -> dict:
    """The light page and its table of contents, from mkdocs-jupyter's converter."""
    # Imported here: nbconvert and its templates are most of a build's start-up otherwise.
    from mkdocs_jupyter.convert import nb2html

    content = lighten(nb2html(str(notebook), execute=False, theme="", custom_mathjax_url=""))
    return {"content": content, "toc": toc_tokens(content)}


class NotebookPages:
    """The hook's state for one build: which cache entries it used."""

    def __init__(self) -> None:
        self.used: set[Path] = set()

    def light(self, root: Path, notebook: Path) -> dict:
        entry = root / CACHE / f"{cache_key(notebook)}.json"
        self.used.add(entry)
        try:
            return json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            page = convert(notebook)
            write_atomically(entry, json.dumps(page))
            return page

    def evict(self, root: Path) -> None:
        for entry in (root / CACHE).glob("*.json"):
            if entry not in self.used:
                entry.unlink(missing_ok=True)


_build = NotebookPages()


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_pre_build(config) -> None:
    global _build
    _build = NotebookPages()


def on_files(files: Files, config) -> Files:
    return Files(
        [
            NotebookFile(f.src_uri, f.src_dir, f.dest_dir, config.use_directory_urls, inclusion=f.inclusion)
            if is_notebook(f) and f.src_dir is not None
            else f
            for f in files
        ]
    )


def on_page_read_source(page, config) -> str | None:
    # A notebook is JSON, not Markdown: the page's content comes from on_page_content.
    return "" if is_notebook(page.file) else None


def on_page_content(html_: str, page, config, files) -> str:
    if not is_notebook(page.file):
        return html_
    light = _build.light(_root(config), Path(page.file.abs_src_path))
    page.toc = get_toc(light["toc"])
    page.meta.setdefault("search", {})["exclude"] = True
    page.nb_url = posixpath.basename(page.file.src_uri)  # copied beside the page (on_post_page)
    return light["content"]


def on_post_page(output: str, page, config) -> str:
    if is_notebook(page.file):  # before MkDocs writes the page, so its folder may not exist yet
        folder = Path(page.file.abs_dest_path).parent
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page.file.abs_src_path, folder / page.nb_url)
    return output


def on_post_build(config) -> None:
    _build.evict(_root(config))
