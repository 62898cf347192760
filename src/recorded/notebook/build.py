"""A lesson as a Jupyter notebook, built from its pages and the recordings.

The notebook is one more reader of the recordings, like the pages and the tests: it
never runs a snippet. The project's script (here scripts/make_notebook.py) writes each lesson's notebook
(``notebook = "…ipynb"`` in its ``[tool.recorded.lessons.<name>]`` entry) under docs/,
where mkdocs-jupyter renders it as a page with a download button.

What goes in, in the order of the lesson's ``pages``: the prose of each page as Markdown
cells, one per heading, made plain by ``prose.convert_markdown``; each ``/// recorded | snippet``
block as a code cell with the snippet's code, without its metadata header, and what the
fresh recording on the notebook's target (the first declared target that provides only
a CPU) printed as the cell's output.

So that the downloaded notebook runs top to bottom on any machine without editing:

- a cell whose snippet needs a device (a target's ``device``, see devices.py) starts with
  that device's guard, a cell magic defined in the first code cell, which prints why it
  skips where there is no such device;
- a snippet that starts processes with multiprocessing's spawn method is written to a
  file (``%%writefile``) and run from it (``%run``), because spawned processes import
  the functions they run from the main module's file, and a notebook cell has none.
  The first code cell moves the notebook into a fresh temporary folder, so that file
  never lands in the reader's own folder.

The output is deterministic: the same pages, snippets and recordings give the same bytes
(cell ids are hashes of the cell's place and content).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

from ..config.devices import Device
from ..config.lessons import Lesson
from ..config.lessons import load as load_lessons
from ..model import describe, escape
from ..model.snippets import Snippet, load, parse_metadata
from ..model.store import State, Store
from ..pages import blocks
from ..pages.site import Site, read_site
from .prose import HEADING, Links, NotebookError, Part, convert_markdown, page_parts


def guard_source(device: Device) -> str:
    """The cell magic that runs a cell only where ``device`` can be used."""
    setup, expression = device.available_parts
    setup = "".join(f"    {line}\n" for line in setup.splitlines()) + ("\n" if setup else "")
    return f"""

@register_cell_magic
def {device.guard}(line, cell):
{setup}    if not {expression}:
        print({json.dumps(device.skip_message, ensure_ascii=False)})
        return
    if not get_ipython().run_cell(cell).success:
        raise UsageError("this cell needs {device.name} and failed: its traceback is above.")"""


def magic_cell(lesson: Lesson, guarded: list[Device] | None = None) -> str:
    """The first code cell: a temporary working folder, and the guard of each device some
    cell needs."""
    guarded = guarded or []
    said = "".join(
        f"# Cells that need {d.name} start with %%{d.guard}: without one they print why they\n"
        "# skip instead of failing, so the notebook runs top to bottom on any machine.\n"
        for d in guarded
    )
    imports = (
        "\nfrom IPython.core.error import UsageError\nfrom IPython.core.magic import register_cell_magic\n"
        if guarded
        else ""
    )
    return f'''\
{said}import os
import tempfile
{imports}
# The notebook works in a fresh temporary folder, so the file one example is run from
# (%%writefile, then %run) lands there and not in the folder you opened the notebook in.
os.chdir(tempfile.mkdtemp(prefix="{lesson.slug}-"))
print("working folder:", os.getcwd())''' + "".join("\n" + guard_source(d) for d in guarded)


KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}

_SPAWNS = re.compile(r"\bmultiprocessing\b|^if __name__ == [\"']__main__[\"']:", re.MULTILINE)


# --- cells -----------------------------------------------------------------------------


def spawns(source: str) -> bool:
    """Whether the code needs a real file as its main module (multiprocessing's spawn)."""
    return bool(_SPAWNS.search(source))


def _stream_outputs(stdout: list[str], stderr: list[str]) -> list:
    outputs = []
    for name, lines in (("stdout", stdout), ("stderr", stderr)):
        if lines:
            shown = escape.visible("\n".join(lines))  # recorded text: no control character reaches a reader
            outputs.append(nbformat.v4.new_output("stream", name=name, text=shown + "\n"))
    return outputs


@dataclass
class _Cells:
    cells: list = field(default_factory=list)

    def markdown(self, text: str) -> None:
        self.cells.append(nbformat.v4.new_markdown_cell(text.strip("\n")))

    def code(self, source: str, outputs: list | None = None, snippet: str | None = None) -> None:
        cell = nbformat.v4.new_code_cell(source.rstrip("\n"))
        cell.outputs = outputs or []
        cell.execution_count = None
        if snippet:  # the cell that prints what this snippet prints
            cell.metadata[METADATA] = {"snippet": snippet}
        self.cells.append(cell)


#: The key, in a code cell's metadata, naming the snippet whose output the cell shows.
METADATA = "recorded"


def snippet_cells(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Each snippet's name and the index of the cell that prints its output."""
    return {
        cell.metadata[METADATA]["snippet"]: index
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and METADATA in cell.metadata
    }


def _machines_sentence(recordings: list, label: str) -> str:
    machines: dict[str, list] = {}
    for rec in recordings:
        machines.setdefault(escape.markdown(describe.machine(rec.machine)), []).append(rec)
    if not machines:
        return f"No {label} recording was fresh when it was generated, so its code cells have no outputs."
    bits = []
    for name, recs in machines.items():
        m = recs[0].machine
        versions = ", ".join(
            f"{lib} {escape.markdown(m.version(key))}"
            for lib, key in (("Python", "python"), ("torch", "torch"), ("numpy", "numpy"))
            if m.version(key)
        )
        days = sorted({r.recorded_at[:10] for r in recs})
        when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
        bits.append(f"{name}, with {versions} ({when})")
    return (
        f"The outputs under the code cells are what each snippet printed on the {label} target, recorded on "
        + "; and on ".join(bits)
        + "."
    )


def notebook_target(store: Store, snippets: list[Snippet] | None = None):
    """The target whose recordings the notebook shows: of the targets without a device, the
    first in tab order with a fresh recording of every snippet that runs on it (a notebook
    of one machine, and no cell left without output); else the first without a device."""
    cpus = [t for t in store.targets if not t.needs_device] or list(store.targets)
    for target in cpus:
        if snippets and all(
            store.status(s, target.name).state in (State.FRESH, State.NOT_APPLICABLE) for s in snippets
        ):
            return target
    return cpus[0]


def dependencies(snippets: list[Snippet]) -> list[str]:
    """What the snippets' PEP 723 headers say they need, for the notebook's intro."""
    found: set[str] = set()
    for snippet in snippets:
        found.update(
            parse_metadata(snippet.path.read_text(encoding="utf-8"), snippet.name).get("dependencies", [])
        )
    return sorted(found)


def lesson_parts(site: Site, lesson: Lesson) -> list[Part]:
    """The lesson's pages cut into parts, each page's first heading anchored for links."""
    parts: list[Part] = []
    for page in lesson.pages:
        path = site.docs_dir / page
        if not path.is_file():
            raise NotebookError(
                f"pyproject.toml: lesson {lesson.name} lists the page {page}, "
                f"which is not in {site.docs_dir}."
            )
        if site.pages and page not in site.pages:
            raise NotebookError(
                f"pyproject.toml: lesson {lesson.name} lists the page {page}, "
                "which mkdocs.yml's nav leaves out; add it to the nav."
            )
        page_cut = page_parts(
            page, path.read_text(encoding="utf-8"), lesson.notebook_skip.get(page, frozenset())
        )
        anchor = Links.page_anchor(page)
        if page_cut and page_cut[0].kind == "markdown":
            page_cut[0].text = _anchor_heading(page_cut[0].text, anchor)
        else:
            page_cut.insert(0, Part("markdown", f'<a id="{anchor}"></a>', page))
        parts.extend(page_cut)
    return parts


def build(root: Path, lesson: Lesson) -> tuple[nbformat.NotebookNode, list[str]]:
    """The lesson's notebook, and the problems a contributor should fix (stale recordings)."""
    root = Path(root)
    site = read_site(root)
    store = Store(root)
    parts = lesson_parts(site, lesson)
    snippets = {p.text: load(store.snippets_dir, p.text, store.targets) for p in parts if p.kind == "snippet"}
    shown = notebook_target(store, list(snippets.values()))
    links = Links(site, set(lesson.pages), {blocks.anchor(name) for name in snippets})
    for part in parts:
        if part.kind == "markdown":
            part.text = convert_markdown(part.page, part.text, links)

    problems: list[str] = []
    used = []
    guarded: list[Device] = []
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
        device = store.targets.device_for(snippet.requires)
        if device and device not in guarded:
            guarded.append(device)
        if not snippet.runs_on(shown):
            other = next((t for t in store.targets if snippet.runs_on(t)), None)
            theirs = store.status(snippet, other.name) if other else None
            state, rec = (theirs.state, theirs.recording) if theirs else (State.NOT_APPLICABLE, None)
            url = site.url(part.page, anchor)
            where = f"[on the lesson site]({url})" if url else "on the lesson site"
            why_not = (
                f"This cell needs {device.name}; without one it prints why it skips."
                if device
                else f"This cell does not run on {shown.label}."
            )
            if state is State.FRESH and rec is not None:
                note = f"*{why_not} What it printed on {escape.markdown(describe.machine(rec.machine))} is {where}.*"
            else:
                note = f"*{why_not} It has not been recorded yet; when it is, its output will be {where}.*"
        else:
            status = store.status(snippet, shown.name)
            state, rec, why = status.state, status.recording, status.reason
            if state is State.FRESH and rec is not None:
                outputs = _stream_outputs(rec.stdout, rec.stderr)
                used.append(rec)
            else:
                problems.append(
                    f"{snippet.name}: no fresh {shown.label} recording ({why}); run "
                    f"`{store.settings.commands.record(snippet.name, shown.name)}`."
                )
                note = f"*No fresh {shown.label} recording of this cell ({why}), so it shows no output.*"
        guard = f"%%{device.guard}\n" if device else ""
        if spawns(source):
            file = PurePosixPath(snippet.name).name
            body.markdown(
                f"This example starts processes with multiprocessing's spawn method, which import the "
                f"functions they run from the main script's file, and a notebook cell has none: the "
                f"first cell below writes the code to `{file}` in the notebook's temporary working folder "
                f"(made by the first code cell), the second runs it."
            )
            body.code(f"%%writefile {file}\n{source}")
            body.code(f"{guard}%run {file}", outputs, snippet.name)
        else:
            body.code(guard + source, outputs, snippet.name)
        if note:
            body.markdown(note)

    needs = dependencies(list(snippets.values()))
    needs_text = (
        f"It needs {' and '.join(f'`{n}`' for n in needs)} (`pip install {' '.join(needs)}`)"
        if needs
        else "It needs only Python"
    )
    labels = [t.label for t in store.targets]
    # A reader opens on the lesson, not on how the notebook was made: the title, one line,
    # and the rest folded as the site folds its asides.
    cells.markdown(
        f"# {lesson.title}\n\n"
        f"*Generated from the lesson site (`{store.settings.commands.all}` writes it again: do not edit it by hand); "
        f"the outputs are as recorded on {escape.markdown(shown.label)}.*\n\n"
        "<details><summary>About this notebook</summary>\n\n"
        + _machines_sentence(used, shown.label)
        + f'\n\nTo see what your own machine prints, <a href="{PurePosixPath(lesson.notebook or "").name}" '
        f"download>download the notebook</a> from the lesson site and run it top to bottom in Jupyter. "
        f"{needs_text}."
        + (f" {lesson.notebook_note}" if lesson.notebook_note else "")
        + "".join(
            f" Cells that need {d.name} start with `%%{d.guard}`, defined in the first code cell: "
            "without one they print why they skip instead of failing."
            for d in guarded
        )
        + "\n\n"
        "Where the prose mentions tabs or highlighted lines, it means the lesson site, which shows "
        f"each output as recorded on every target ({', '.join(labels)}) side by side, with the lines "
        "the text relies on highlighted.\n\n</details>"
    )
    # The set-up cell runs first, but is read where the code starts, after the lesson's opening.
    first_code = next((i for i, c in enumerate(body.cells) if c.cell_type == "code"), len(body.cells))
    cells.cells.extend(body.cells[:first_code])
    cells.code(magic_cell(lesson, guarded))
    cells.cells.extend(body.cells[first_code:])
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
    if h := HEADING.match(first):
        first = f'{h.group(1)} <a id="{anchor}"></a>{h.group(2)}'
    else:
        first = f'<a id="{anchor}"></a>\n\n{first}'
    return f"{first}\n{rest}" if rest else first


def _merge_markdown(cells: list) -> list:
    """Join a Markdown cell into the one before it unless it starts with a heading."""
    merged: list = []
    for cell in cells:
        if (
            cell.cell_type == "markdown"
            and merged
            and merged[-1].cell_type == "markdown"
            and not HEADING.match(cell.source.split("\n", 1)[0])
        ):
            merged[-1].source = merged[-1].source.rstrip("\n") + "\n\n" + cell.source
        else:
            merged.append(cell)
    return merged


def render(root: Path, lesson: Lesson) -> tuple[str, list[str]]:
    """The notebook's file contents, byte for byte, and the problems found building it."""
    nb, problems = build(root, lesson)
    text = nbformat.writes(nb, version=4)
    return (text if text.endswith("\n") else text + "\n"), problems


def notebook_path(root: Path, lesson: Lesson) -> Path:
    if not lesson.notebook:
        raise NotebookError(f"pyproject.toml: lesson {lesson.name} declares no notebook.")
    return read_site(root).docs_dir / lesson.notebook


def with_notebooks(root: Path) -> list[Lesson]:
    """The project's lessons that declare a notebook, in declared order."""
    return [lesson for lesson in load_lessons(root).values() if lesson.notebook]
