"""A lesson as a Jupyter notebook, built from its pages and recordings; it never runs a snippet.

Prose becomes Markdown cells (prose.py); a ``/// recorded`` block, a code cell with what the fresh
recording on the notebook's target printed. To run top to bottom anywhere, a cell needing a device
starts with its guard, a cell magic the first code cell defines; a snippet that spawns processes is
written to a file and run from it (spawned processes import the main module's file, which a cell
lacks). Cell ids hash each cell's place and content: the same inputs give the same bytes.
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
from ..config.targets import Target
from ..model import describe, escape
from ..model.snippets import Snippet, load
from ..model.store import State, Store
from ..pages import blocks
from ..pages.site import Site, read_site
from .prose import Links, NotebookError, Part, anchor_heading, convert_markdown, merge_markdown, page_parts

#: The key, in a code cell's metadata, naming the snippet whose output the cell shows.
METADATA = "recorded"
_IMPORTS = "\nfrom IPython.core.error import UsageError\nfrom IPython.core.magic import register_cell_magic\n"


def magic_cell(lesson: Lesson, guarded: list[Device]) -> str:
    """The first code cell: a temporary working folder, and for each device some cell needs its
    guard, a cell magic that runs the cell only where the device can be used."""
    said, guards = "", ""
    for d in guarded:
        said += (
            f"# Cells that need {d.name} start with %%{d.guard}: without one they print why they\n"
            "# skip instead of failing, so the notebook runs top to bottom on any machine.\n"
        )
        setup, expression = d.available_parts
        setup = "".join(f"    {line}\n" for line in setup.splitlines()) + ("\n" if setup else "")
        guards += f"""


@register_cell_magic
def {d.guard}(line, cell):
{setup}    if not {expression}:
        print({json.dumps(d.skip_message, ensure_ascii=False)})
        return
    if not get_ipython().run_cell(cell).success:
        raise UsageError("this cell needs {d.name} and failed: its traceback is above.")"""
    return f'''\
{said}import os
import tempfile
{_IMPORTS if guarded else ""}
# The notebook works in a fresh temporary folder, so the file one example is run from
# (%%writefile, then %run) lands there and not in the folder you opened the notebook in.
os.chdir(tempfile.mkdtemp(prefix="{lesson.slug}-"))
print("working folder:", os.getcwd()){guards}'''


def spawns(source: str) -> bool:
    """Whether the code needs a real file as its main module (multiprocessing's spawn)."""
    return bool(re.search(r"\bmultiprocessing\b|^if __name__ == [\"']__main__[\"']:", source, re.MULTILINE))


def _markdown(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text.strip("\n"))


def _code(source: str, outputs: list | None = None, snippet: str | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source.rstrip("\n"), outputs=outputs or [])
    if snippet:  # the cell that prints what this snippet prints
        cell.metadata[METADATA] = {"snippet": snippet}
    return cell


def snippet_cells(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Each snippet's name and the index of the cell that prints its output."""
    return {c.metadata[METADATA]["snippet"]: i for i, c in enumerate(nb.cells) if METADATA in c.metadata}


def notebook_target(store: Store, snippets: list[Snippet]) -> Target:
    """Of the targets without a device, the first in tab order with a fresh recording of every
    snippet that runs on it (one machine, no cell without output); else the first of them."""
    cpus = [t for t in store.targets if not t.needs_device] or list(store.targets)
    shown = (State.FRESH, State.NOT_APPLICABLE)
    return next((t for t in cpus if all(store.standing(s, t).state in shown for s in snippets)), cpus[0])


def lesson_parts(site: Site, lesson: Lesson) -> list[Part]:
    """The lesson's pages cut into parts, each page's first heading anchored for links."""
    parts: list[Part] = []
    for page in lesson.pages:
        path = site.docs_dir / page
        said = f"pyproject.toml: lesson {lesson.name} lists the page {page}, which"
        if not path.is_file():
            raise NotebookError(f"{said} is not in {site.docs_dir}.")
        if site.pages and page not in site.pages:
            raise NotebookError(f"{said} mkdocs.yml's nav leaves out; add it to the nav.")
        cut = page_parts(page, path.read_text(encoding="utf-8"), lesson.notebook_skip.get(page, frozenset()))
        if not cut or cut[0].kind != "markdown":
            cut.insert(0, Part("markdown", "", page))
        cut[0].text = anchor_heading(cut[0].text, Links.page_anchor(page))
        parts.extend(cut)
    return parts


@dataclass
class _Body:
    """The lesson's cells as they are made, and what the introduction says of them."""

    store: Store
    shown: Target  #: the target whose recordings the cells show
    links: Links
    cells: list = field(default_factory=list)
    used: list = field(default_factory=list)  #: the recordings shown
    guarded: list[Device] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, snippet: Snippet, page: str) -> None:
        """The snippet's code cell, with its recorded output, and a note where it shows none."""
        anchor = blocks.anchor(snippet.name)
        if anchor in self.links.targets:
            self.cells.append(_markdown(f'<a id="{anchor}"></a>'))
        source = snippet.display_source().rstrip("\n")
        device = self.store.targets.device_for(snippet.requires)
        if device and device not in self.guarded:
            self.guarded.append(device)
        standing = self.store.standing(snippet, self.shown)
        outputs, note, label = [], "", self.shown.label
        if not snippet.runs_on(self.shown):
            note = self._elsewhere(snippet, device, self.links.site.url(page, anchor))
        elif standing.state is State.FRESH and (rec := standing.recording) is not None:
            outputs = [
                # recorded text: no control character reaches a reader
                nbformat.v4.new_output("stream", name=name, text=escape.visible("\n".join(lines)) + "\n")
                for name, lines in (("stdout", rec.stdout), ("stderr", rec.stderr))
                if lines
            ]
            self.used.append(rec)
        else:
            why, command = standing.reason, self.store.settings.commands.record(snippet.name, self.shown.name)
            self.problems.append(f"{snippet.name}: no fresh {label} recording ({why}); run `{command}`.")
            note = f"*No fresh {label} recording of this cell ({why}), so it shows no output.*"
        guard = f"%%{device.guard}\n" if device else ""
        if spawns(source):
            file = PurePosixPath(snippet.name).name
            self.cells += [
                _markdown(
                    "This example starts processes with multiprocessing's spawn method, which import the "
                    "functions they run from the main script's file, and a notebook cell has none: the "
                    f"first cell below writes the code to `{file}` in the notebook's temporary working "
                    "folder (made by the first code cell), the second runs it."
                ),
                _code(f"%%writefile {file}\n{source}"),
                _code(f"{guard}%run {file}", outputs, snippet.name),
            ]
        else:
            self.cells.append(_code(guard + source, outputs, snippet.name))
        if note:
            self.cells.append(_markdown(note))

    def _elsewhere(self, snippet: Snippet, device: Device | None, url: str) -> str:
        """The note under a cell that does not run on the notebook's target."""
        other = next((t for t in self.store.targets if snippet.runs_on(t)), None)
        standing = self.store.standing(snippet, other) if other else None
        where = f"[on the lesson site]({url})" if url else "on the lesson site"
        why_not = f"This cell does not run on {self.shown.label}."
        if device:
            why_not = f"This cell needs {device.name}; without one it prints why it skips."
        if standing and standing.state is State.FRESH and standing.recording is not None:
            machine = escape.markdown(describe.machine(standing.recording.machine))
            return f"*{why_not} What it printed on {machine} is {where}.*"
        return f"*{why_not} It has not been recorded yet; when it is, its output will be {where}.*"

    def machines(self) -> str:
        """The sentence naming the machines, versions and days of the recordings shown."""
        label = self.shown.label
        by_machine: dict[str, list] = {}
        for rec in self.used:
            by_machine.setdefault(escape.markdown(describe.machine(rec.machine)), []).append(rec)
        if not by_machine:
            return f"No {label} recording was fresh when it was generated, so its code cells have no outputs."
        bits = []
        for name, recs in by_machine.items():
            versions = ", ".join(
                f"{lib} {escape.markdown(version)}"
                for lib, key in (("Python", "python"), ("torch", "torch"), ("numpy", "numpy"))
                if (version := recs[0].machine.version(key))
            )
            days = sorted({r.recorded_at[:10] for r in recs})
            bits.append(f"{name}, with {versions} ({days[0]}{f' to {days[-1]}' if len(days) > 1 else ''})")
        return (
            f"The outputs under the code cells are what each snippet printed on the {label} target, "
            f"recorded on {'; and on '.join(bits)}."
        )

    def introduction(self, lesson: Lesson, snippets: list[Snippet]) -> str:
        """The title, one line, and the rest folded as the site folds its asides."""
        needs = sorted({need for s in snippets for need in s.dependencies})
        needs_text = "It needs only Python"
        if needs:
            needs_text = f"It needs {' and '.join(f'`{n}`' for n in needs)} (`pip install {' '.join(needs)}`)"
        return (
            f"# {lesson.title}\n\n*Generated from the lesson site (`{self.store.settings.commands.all}` "
            "writes it again: do not edit it by hand); "
            f"the outputs are as recorded on {escape.markdown(self.shown.label)}.*\n\n"
            "<details><summary>About this notebook</summary>\n\n"
            + self.machines()
            + "\n\nTo see what your own machine prints, "
            f'<a href="{PurePosixPath(lesson.notebook or "").name}" download>download the notebook</a> '
            f"from the lesson site and run it top to bottom in Jupyter. {needs_text}."
            + (f" {lesson.notebook_note}" if lesson.notebook_note else "")
            + "".join(
                f" Cells that need {d.name} start with `%%{d.guard}`, defined in the first code cell: "
                "without one they print why they skip instead of failing."
                for d in self.guarded
            )
            + "\n\nWhere the prose mentions tabs or highlighted lines, it means the lesson site, which shows "
            f"each output as recorded on every target ({', '.join(t.label for t in self.store.targets)}) "
            "side by side, with the lines the text relies on highlighted.\n\n</details>"
        )


def build(root: Path, lesson: Lesson) -> tuple[nbformat.NotebookNode, list[str]]:
    """The lesson's notebook, and the problems a contributor should fix (stale recordings)."""
    site, store = read_site(Path(root)), Store(Path(root))
    parts = lesson_parts(site, lesson)
    snippets = {p.text: load(store.snippets_dir, p.text, store.targets) for p in parts if p.kind == "snippet"}
    links = Links(site, set(lesson.pages), {blocks.anchor(name) for name in snippets})
    for part in parts:  # every link first: links.targets says which snippets need an anchor
        if part.kind == "markdown":
            part.text = convert_markdown(part.page, part.text, links)
    body = _Body(store, notebook_target(store, list(snippets.values())), links)
    for part in parts:
        if part.kind == "markdown":
            body.cells.append(_markdown(part.text))
        else:
            body.add(snippets[part.text], part.page)
    # The set-up cell runs first, but is read where the code starts, after the lesson's opening.
    first = next((i for i, c in enumerate(body.cells) if c.cell_type == "code"), len(body.cells))
    intro = _markdown(body.introduction(lesson, list(snippets.values())))
    setup = _code(magic_cell(lesson, body.guarded))
    cells = merge_markdown([intro, *body.cells[:first], setup, *body.cells[first:]])
    for index, cell in enumerate(cells):
        cell.id = hashlib.sha256(f"{index}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:16]
    # Made afresh for each notebook: running it (checks/kernel.py) rewrites its language_info.
    language = {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
    }
    kernel = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernel, "language_info": language})
    nbformat.validate(nb)
    return nb, body.problems


def render(root: Path, lesson: Lesson) -> tuple[str, list[str]]:
    """The notebook's file contents, byte for byte (nbformat.writes ends without a newline)."""
    nb, problems = build(root, lesson)
    return nbformat.writes(nb) + "\n", problems


def notebook_path(root: Path, lesson: Lesson) -> Path:
    if not lesson.notebook:
        raise NotebookError(f"pyproject.toml: lesson {lesson.name} declares no notebook.")
    return read_site(root).docs_dir / lesson.notebook


def with_notebooks(root: Path) -> list[Lesson]:
    """The project's lessons that declare a notebook, in declared order."""
    return [lesson for lesson in load_lessons(root).values() if lesson.notebook]
