"""The lesson as a Jupyter notebook, built from the pages and the recordings.

The notebook is one more reader of the recordings, like the pages and the tests: it
never runs a snippet. ``python scripts/make_notebook.py`` writes it to docs/lesson.ipynb,
where mkdocs-jupyter renders it as a page with a download button.

What goes in, in the order of the ``nav`` in mkdocs.yml:

- the prose of each lesson page as Markdown cells, one per heading. Material-only syntax
  that Jupyter would show raw becomes plain Markdown: an admonition (``!!! tip "Title"``,
  ``??? info "Title"``) becomes a bold title line and its de-indented body, a figure
  becomes a one-line note (the notebook stands alone, and the figures live on the site),
  a task list becomes a plain list, and a link to another lesson page becomes a link
  inside the notebook;
- each ``/// recorded | snippet`` block as a code cell with the snippet's code, without
  its metadata header, and what the fresh CPU recording printed as the cell's output.

So that the downloaded notebook runs top to bottom on any machine without editing:

- a cell whose snippet needs an NVIDIA GPU starts with ``%%needs_cuda``, a cell magic
  defined in the first code cell, which prints why it skips when there is no GPU;
- a snippet that starts processes with multiprocessing's spawn method is written to a
  file (``%%writefile``) and run from it (``%run``), because spawned processes import
  the functions they run from the main module's file, and a notebook cell has none.

The output is deterministic: the same pages, snippets and recordings give the same bytes
(cell ids are hashes of the cell's place and content).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat
import yaml

from . import blocks, describe
from .snippets import Snippet, load
from .store import State, Store, record_command

#: Where the notebook lives under docs/, and the command that writes it.
NOTEBOOK = "lesson.ipynb"
COMMAND = "python scripts/make_notebook.py"
#: Nav pages that are about the site rather than the lesson.
SKIP_PAGES = frozenset({"recordings.md", "contributing.md"})
#: Sections of lesson pages that describe the site itself (its tabs), not the lesson.
SKIP_SECTIONS = {"index.md": frozenset({"How to read the outputs"})}
#: The cell magic that guards cells needing an NVIDIA GPU, and what it prints without one.
MAGIC = "needs_cuda"
SKIP_MESSAGE = "Skipped: this cell needs an NVIDIA GPU (torch.cuda.is_available() is False here)."

MAGIC_CELL = f'''\
# Cells that need an NVIDIA GPU start with %%{MAGIC}: without a GPU they print why they
# skip instead of failing, so the notebook runs top to bottom on any machine.
from IPython.core.error import UsageError
from IPython.core.magic import register_cell_magic


@register_cell_magic
def {MAGIC}(line, cell):
    import torch

    if not torch.cuda.is_available():
        print("{SKIP_MESSAGE}")
        return
    if not get_ipython().run_cell(cell).success:
        raise UsageError("this GPU cell failed: its traceback is above.")'''

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})")
_BLOCK_END = re.compile(r"^/{3,}[ \t]*$")
_ADMONITION = re.compile(r'^(?P<indent>[ \t]*)(?:!!!|\?\?\?\+?)[ \t]+(?P<type>[\w-]+)(?:[ \t]+"(?P<title>[^"]*)")?[ \t]*$')
_FIGURE_START = re.compile(r"^[ \t]*<figure\b[^>]*>[ \t]*$")
_FIGURE_END = re.compile(r"^[ \t]*</figure>[ \t]*$")
_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)")
_CAPTION = re.compile(r"<figcaption>(?P<caption>.*?)</figcaption>", re.S)
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\)")
_TASK = re.compile(r"^(?P<lead>[ \t]*[-*+][ \t]+)\[[ xX]\][ \t]+")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_SPAWNS = re.compile(r"\bmultiprocessing\b|^if __name__ == [\"']__main__[\"']:", re.M)


class NotebookError(ValueError):
    """The pages or mkdocs.yml cannot be turned into a notebook; the message says why."""


# --- mkdocs.yml ------------------------------------------------------------------------


class _ConfigLoader(yaml.SafeLoader):
    """Reads mkdocs.yml for its nav: tags such as !ENV and !!python/name load as None."""


_ConfigLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


@dataclass(frozen=True)
class Site:
    docs_dir: Path
    pages: tuple[str, ...]  #: every page of the nav, in order, relative to docs_dir
    site_url: str
    use_directory_urls: bool = True

    def url(self, page: str, fragment: str = "") -> str:
        """The published address of a page, or '' when mkdocs.yml names no site_url."""
        if not self.site_url:
            return ""
        path = PurePosixPath(page).with_suffix("")
        if not self.use_directory_urls:
            url = f"{path.as_posix()}.html"
        elif path.name == "index":
            url = "" if path.parent == PurePosixPath(".") else f"{path.parent.as_posix()}/"
        else:
            url = f"{path.as_posix()}/"
        url = self.site_url.rstrip("/") + "/" + url
        return f"{url}#{fragment}" if fragment else url


def _nav_pages(nav) -> list[str]:
    found: list[str] = []
    for item in nav or []:
        value = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else item
        if isinstance(value, str):
            if value.endswith(".md"):
                found.append(value)
        elif isinstance(value, list):
            found.extend(_nav_pages(value))
    return found


def read_site(root: Path) -> Site:
    config_path = Path(root) / "mkdocs.yml"
    config = yaml.load(config_path.read_text(encoding="utf-8"), Loader=_ConfigLoader) or {}
    if not config.get("nav"):
        raise NotebookError("mkdocs.yml has no nav: the notebook follows the nav's page order.")
    return Site(
        docs_dir=Path(root) / (config.get("docs_dir") or "docs"),
        pages=tuple(_nav_pages(config["nav"])),
        site_url=config.get("site_url") or "",
        use_directory_urls=config.get("use_directory_urls", True) is not False,
    )


def lesson_pages(site: Site) -> list[str]:
    """The nav's pages that make up the lesson, in nav order."""
    return [p for p in site.pages if PurePosixPath(p).name not in SKIP_PAGES]


# --- pages into parts ------------------------------------------------------------------


@dataclass
class Part:
    kind: str  #: "markdown" or "snippet"
    text: str  #: the Markdown lines (raw, converted later), or the snippet's name
    page: str
    line: int = 0  #: the block's header line, for snippets


def page_parts(page: str, text: str) -> list[Part]:
    """A page cut into Markdown runs (a new one at each heading) and snippet blocks."""
    lines = text.splitlines()
    headers = dict(blocks.headers(lines))
    skip = SKIP_SECTIONS.get(page, frozenset())
    parts: list[Part] = []
    run: list[str] = []
    fence: str | None = None
    skipping: int | None = None  # the level of the heading whose section is left out

    def flush() -> None:
        if run and any(line.strip() for line in run) and skipping is None:
            parts.append(Part("markdown", "\n".join(run).strip("\n"), page))
        run.clear()

    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        if fence is not None:
            m = _FENCE.match(line)
            if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence) \
                    and not line[m.end():].strip():
                fence = None
            run.append(line)
            continue
        if m := _FENCE.match(line):
            fence = m.group("fence")
            run.append(line)
            continue
        if h := _HEADING.match(line):
            flush()
            level = len(h.group(1))
            if skipping is not None and level <= skipping:
                skipping = None
            if skipping is None and h.group(2) in skip:
                skipping = level
            run.append(line)
            continue
        if number in headers:
            flush()
            end = number
            while end < len(lines) and not _BLOCK_END.match(lines[end]):
                end += 1
            if end == len(lines):
                raise NotebookError(f"{page}:{number}: the `/// recorded` block has no closing `///` line.")
            if skipping is None:
                parts.append(Part("snippet", headers[number], page, number))
            number = end + 1
            continue
        run.append(line)
    flush()
    return parts


# --- Markdown conversion ---------------------------------------------------------------


@dataclass
class _Links:
    """Rewrites links between lesson pages into links inside the notebook."""

    site: Site
    included: set[str]
    snippet_anchors: set[str]
    targets: set[str] = field(default_factory=set)  #: anchors some link points at

    @staticmethod
    def page_anchor(page: str) -> str:
        return "page-" + re.sub(r"[^a-z0-9]+", "-", PurePosixPath(page).with_suffix("").as_posix().lower()).strip("-")

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


def convert_markdown(page: str, text: str, links: _Links) -> str:
    """Material's Markdown made plain, for Jupyter: admonitions, figures, task lists, links."""
    lines = text.split("\n")
    out: list[tuple[str, bool]] = []  # each line, and whether it is prose whose links to rewrite
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if fence is not None:
            m = _FENCE.match(line.lstrip())
            if m and m.group("fence")[0] == fence[0] and len(m.group("fence")) >= len(fence):
                fence = None
            out.append((line, False))
            continue
        if m := _FENCE.match(line.lstrip()):
            fence = m.group("fence")
            out.append((line, False))
            continue
        if a := _ADMONITION.match(line):
            indent = len(a.group("indent")) + 4
            body: list[str] = []
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= indent):
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
            if title:
                out += [(f"{pad}**{links.rewrite(page, title)}**", False), ("", False)]
            inner = convert_markdown(page, "\n".join(_dedent(body, indent)).strip("\n"), links)
            out += [(f"{pad}{x}" if x else "", False) for x in inner.split("\n")]
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
            words = [c.strip() for c in (
                image.group("alt") if image else "",
                " ".join(caption.group("caption").split()) if caption else "",
            ) if c.strip()]
            out.append(("*Figure, shown on the lesson site:* " + " ".join(words), False))
            continue
        out.append((_TASK.sub(lambda t: t.group("lead"), line), True))
    # Links are rewritten over each run of prose lines, so a link that wraps is found too.
    text, run = [], []
    for line, prose in out + [("", False)]:
        if prose:
            run.append(line)
            continue
        if run:
            text.append(links.rewrite(page, "\n".join(run)))
            run = []
        text.append(line)
    return "\n".join(text[:-1])


# --- cells -----------------------------------------------------------------------------


def requires_cuda(snippet: Snippet) -> bool:
    return "cuda" in snippet.requires


def spawns(source: str) -> bool:
    """Whether the code needs a real file as its main module (multiprocessing's spawn)."""
    return bool(_SPAWNS.search(source))


def _stream_outputs(stdout: list[str], stderr: list[str]) -> list:
    outputs = []
    for name, lines in (("stdout", stdout), ("stderr", stderr)):
        if lines:
            outputs.append(nbformat.v4.new_output("stream", name=name, text="\n".join(lines) + "\n"))
    return outputs


@dataclass
class _Cells:
    cells: list = field(default_factory=list)

    def markdown(self, text: str) -> None:
        self.cells.append(nbformat.v4.new_markdown_cell(text.strip("\n")))

    def code(self, source: str, outputs: list | None = None) -> None:
        cell = nbformat.v4.new_code_cell(source.rstrip("\n"))
        cell.outputs = outputs or []
        cell.execution_count = None
        self.cells.append(cell)


def _machines_sentence(recordings: list) -> str:
    machines: dict[str, list] = {}
    for rec in recordings:
        machines.setdefault(describe.machine(rec.machine), []).append(rec)
    if not machines:
        return "No CPU recording was fresh when it was generated, so its code cells have no outputs."
    bits = []
    for name, recs in machines.items():
        m = recs[0].machine
        versions = ", ".join(
            f"{lib} {m[key]}" for lib, key in (("Python", "python"), ("torch", "torch"), ("numpy", "numpy"))
            if m.get(key)
        )
        days = sorted({r.recorded_at[:10] for r in recs})
        when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
        bits.append(f"{name}, with {versions} ({when})")
    return ("The outputs under the code cells are what each snippet printed on a CPU, recorded on "
            + "; and on ".join(bits) + ".")


def build(root: Path) -> tuple[nbformat.NotebookNode, list[str]]:
    """The notebook, and the problems a contributor should fix (stale CPU recordings)."""
    root = Path(root)
    site = read_site(root)
    store = Store(root)
    pages = lesson_pages(site)
    parts: list[Part] = []
    for page in pages:
        path = site.docs_dir / page
        if not path.is_file():
            raise NotebookError(f"mkdocs.yml's nav names {page}, which is not in {site.docs_dir}.")
        page_cut = page_parts(page, path.read_text(encoding="utf-8"))
        anchor = _Links.page_anchor(page)
        if page_cut and page_cut[0].kind == "markdown":
            page_cut[0].text = _anchor_heading(page_cut[0].text, anchor)
        else:
            page_cut.insert(0, Part("markdown", f'<a id="{anchor}"></a>', page))
        parts.extend(page_cut)

    snippets = {p.text: load(store.snippets_dir, p.text) for p in parts if p.kind == "snippet"}
    links = _Links(site, set(pages), {blocks.anchor(name) for name in snippets})
    for part in parts:
        if part.kind == "markdown":
            part.text = convert_markdown(part.page, part.text, links)

    problems: list[str] = []
    used = []
    cells = _Cells()
    body = _Cells()
    for part in parts:
        if part.kind == "markdown":
            body.markdown(part.text)
            continue
        snippet = snippets[part.text]
        anchor = blocks.anchor(snippet.name)
        if anchor in links.targets:
            body.markdown(f'<a id="{anchor}"></a>')
        source = snippet.display_source().rstrip("\n")
        outputs: list = []
        note = ""
        if requires_cuda(snippet):
            state, rec, _ = store.state(snippet, "cuda")
            url = site.url(part.page, anchor)
            where = f"[on the lesson site]({url})" if url else "on the lesson site"
            if state is State.FRESH and rec is not None:
                note = (f"*This cell needs an NVIDIA GPU; without one it prints why it skips. What it "
                        f"printed on {describe.machine(rec.machine)} is {where}.*")
            else:
                note = ("*This cell needs an NVIDIA GPU; without one it prints why it skips. It has not "
                        f"been recorded on a GPU yet; when it is, its output will be {where}.*")
        else:
            state, rec, why = store.state(snippet, "cpu")
            if state is State.FRESH and rec is not None:
                outputs = _stream_outputs(rec.stdout, rec.stderr)
                used.append(rec)
            else:
                problems.append(f"{snippet.name}: no fresh CPU recording ({why}); run "
                                f"`{record_command(snippet.name, 'cpu')}`, then `{COMMAND}`.")
                note = f"*No fresh CPU recording of this cell ({why}), so it shows no output.*"
        guard = f"%%{MAGIC}\n" if requires_cuda(snippet) else ""
        if spawns(source):
            file = PurePosixPath(snippet.name).name
            body.markdown(
                f"This example starts processes with multiprocessing's spawn method, which import the "
                f"functions they run from the main script's file, and a notebook cell has none: the "
                f"first cell below writes the code to `{file}` beside the notebook, the second runs it."
            )
            body.code(f"%%writefile {file}\n{source}")
            body.code(f"{guard}%run {file}", outputs)
        else:
            body.code(guard + source, outputs)
        if note:
            body.markdown(note)

    cells.markdown(
        f"*This notebook is generated by `{COMMAND}` from the lesson site's pages, snippets and "
        "recordings: do not edit it by hand.*\n\n"
        + _machines_sentence(used)
        + f'\n\nTo see what your own machine prints, <a href="{NOTEBOOK}" download>download the '
        "notebook</a> from the lesson site and run it top to bottom in Jupyter. It needs `torch` and "
        "`numpy` (`pip install torch numpy`); `torch.compile` on a CPU also needs a C++ compiler. "
        f"Cells that need an NVIDIA GPU start with `%%{MAGIC}`, defined in the first code cell: "
        "without a GPU they print why they skip instead of failing.\n\n"
        "Where the prose mentions tabs or highlighted lines, it means the lesson site, which shows "
        "each output recorded on a CPU and on a GPU side by side, with the lines the text relies on "
        "highlighted."
    )
    cells.code(MAGIC_CELL)
    cells.cells.extend(body.cells)
    cells.cells = _merge_markdown(cells.cells)

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    for index, cell in enumerate(cells.cells):
        digest = hashlib.sha256(f"{index}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()
        cell.id = digest[:16]
    nb.cells = cells.cells
    nbformat.validate(nb)
    return nb, problems


def _anchor_heading(text: str, anchor: str) -> str:
    """Put an anchor in a page's first heading, so that links to the page land on it."""
    first, _, rest = text.partition("\n")
    if h := _HEADING.match(first):
        first = f'{h.group(1)} <a id="{anchor}"></a>{h.group(2)}'
    else:
        first = f'<a id="{anchor}"></a>\n\n{first}'
    return f"{first}\n{rest}" if rest else first


def _merge_markdown(cells: list) -> list:
    """Join a Markdown cell into the one before it unless it starts with a heading."""
    merged: list = []
    for cell in cells:
        if (cell.cell_type == "markdown" and merged and merged[-1].cell_type == "markdown"
                and not _HEADING.match(cell.source.split("\n", 1)[0])):
            merged[-1].source = merged[-1].source.rstrip("\n") + "\n\n" + cell.source
        else:
            merged.append(cell)
    return merged


def render(root: Path) -> tuple[str, list[str]]:
    """The notebook's file contents, byte for byte, and the problems found building it."""
    nb, problems = build(root)
    text = nbformat.writes(nb, version=4)
    return (text if text.endswith("\n") else text + "\n"), problems


def notebook_path(root: Path) -> Path:
    return read_site(root).docs_dir / NOTEBOOK
