"""Each lesson's notebook (docs/lesson.ipynb, say), generated from its pages and the recordings.

For every lesson in pyproject.toml that declares a notebook, what `make record` writes
(tests/pages/test_generated.py checks that the committed one is that) must hold every snippet of
the lesson's pages in page order with its CPU recording as output, and run top to bottom in
Jupyter (the slow test: the session's one run of the notebook, checks/live.py).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from site_tools import copy_site

from recorded.config import targets
from recorded.config.lessons import Lesson
from recorded.model.snippets import Snippet, load
from recorded.model.store import State, Store
from recorded.notebook import render, with_notebooks
from recorded.notebook.build import notebook_target, spawns
from recorded.notebook.prose import Links, convert_markdown, page_parts
from recorded.pages import blocks
from recorded.pages.site import read_site

ROOT = Path(__file__).resolve().parents[2]
#: The one command that writes everything made from the recordings, the notebook included.
COMMAND = Store(ROOT).settings.commands.all
#: The lessons with a notebook, from pyproject.toml: every test below runs once for each.
LESSONS = with_notebooks(ROOT)
TARGETS = targets.load(ROOT)
#: A device's guard: a cell magic on a line of its own (``%%writefile FILE`` takes an argument).
GUARD = re.compile(r"\A%%[A-Za-z_]\w*\n")


def guard(snippet: Snippet) -> str:
    """The guard the cell of a snippet starts with: its device's, or none."""
    device = TARGETS.device_for(snippet.requires)
    return f"%%{device.guard}\n" if device else ""


def unguarded(source: str) -> str:
    return GUARD.sub("", source, count=1)


@pytest.fixture(params=LESSONS, ids=[lesson.name for lesson in LESSONS])
def lesson(request) -> Lesson:
    return request.param


def test_the_site_has_a_lesson_with_a_notebook():
    assert LESSONS, "no lesson in pyproject.toml declares a notebook, so these tests check nothing"


@functools.cache
def _rendered(name: str) -> str:
    (lesson,) = [lesson for lesson in LESSONS if lesson.name == name]
    return render(ROOT, lesson)[0]


def rendered(lesson: Lesson) -> str:
    return _rendered(lesson.name)


def generated(lesson: Lesson) -> nbformat.NotebookNode:
    """The notebook the command writes now (a new copy each time: running it changes it);
    tests/pages/test_generated.py checks the committed one against it, so a notebook left behind by
    a re-recording is reported once, not here."""
    return nbformat.reads(rendered(lesson), as_version=4)


def shown_snippets(lesson: Lesson) -> list[Snippet]:
    """Every snippet the lesson's pages show, in nav order and page order."""
    site = read_site(ROOT)
    names = []
    for page in lesson.pages:
        names += [
            n for _, n in blocks.headers((site.docs_dir / page).read_text(encoding="utf-8").splitlines())
        ]
    return [load(ROOT / "snippets", n) for n in names]


def snippet_cells(nb) -> list[tuple[str, nbformat.NotebookNode]]:
    """(the code as shown, the cell holding its output) for each snippet cell, in order.

    A snippet written to a file with %%writefile is run by the next cell, `%run FILE`,
    which holds its output.
    """
    found, code = [], [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(code):
        if i == 0:  # the first code cell: the working folder and the devices' guards
            continue
        if cell.source.startswith("%%writefile "):
            header, _, body = cell.source.partition("\n")
            runner = code[i + 1]
            assert unguarded(runner.source) == f"%run {header.split()[1]}", runner.source
            found.append((runner.source.removesuffix(unguarded(runner.source)) + body, runner))
        elif not unguarded(cell.source).startswith("%run "):
            found.append((cell.source, cell))
    return found


def test_generation_is_deterministic_and_the_check_flag_says_what_to_run(tmp_path, lesson):
    assert render(ROOT, lesson)[0] == rendered(lesson)
    copy_site(ROOT, tmp_path, extra=("scripts", "src"))
    script = [sys.executable, str(tmp_path / "scripts" / "make_notebook.py")]
    assert subprocess.run(script, capture_output=True, text=True, check=False).returncode == 0
    assert subprocess.run(script + ["--check"], capture_output=True, text=True, check=False).returncode == 0

    expected = shown_snippets(lesson)
    target = notebook_target(Store(ROOT), expected)
    edited = next(s for s in expected if s.runs_on(target))  # one whose output the notebook shows
    snippet = tmp_path / "snippets" / edited.name
    snippet.write_text(
        snippet.read_text(encoding="utf-8") + "pass  # edited: code, so the recording is stale\n",
        encoding="utf-8",
    )
    done = subprocess.run(script + ["--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert f"run `{COMMAND}`" in done.stderr
    assert f"{edited.name}: no fresh " in done.stderr


def test_the_notebook_is_valid_with_a_python_kernel_and_unique_cell_ids(lesson):
    nb = generated(lesson)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert nb.metadata.language_info.name == "python"
    ids = [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and COMMAND in first.source and "do not edit" in first.source
    # It opens on the lesson, its making folded below one line.
    assert first.source.startswith(f"# {lesson.title}\n"), first.source[:80]
    assert first.source.index("<details>") < first.source.index("download the notebook")
    assert nb.cells[1].cell_type == "markdown", "the set-up code comes after the lesson's opening"
    assert all(c.execution_count is None for c in nb.cells if c.cell_type == "code")


def test_every_snippet_of_the_lesson_pages_is_in_it_in_order_with_its_cpu_recording(lesson):
    nb, store = generated(lesson), Store(ROOT)
    cells = snippet_cells(nb)
    expected = shown_snippets(lesson)
    target = notebook_target(store, expected)
    assert not target.needs_device
    assert expected, f"the pages of lesson {lesson.name} show no snippet"
    shown = [unguarded(source).rstrip("\n") for source, _ in cells]
    assert shown == [s.display_source().rstrip("\n") for s in expected], (
        f"the notebook's code cells differ from the pages' snippets: run `{COMMAND}`"
    )
    for snippet, (_, cell) in zip(expected, cells):
        if not snippet.runs_on(target):
            assert cell.outputs == [], snippet.name
            continue
        status = store.standing(snippet, target)
        state, rec, why = status.state, status.recording, status.reason
        assert state is State.FRESH, f"{snippet.name}: the CPU recording is {state.value} ({why})"
        assert rec is not None, snippet.name
        streams = {o.name: o.text for o in cell.outputs if o.output_type == "stream"}
        assert streams.get("stdout") == "\n".join(rec.stdout) + "\n", snippet.name
        assert streams.get("stderr") == ("\n".join(rec.stderr) + "\n" if rec.stderr else None), snippet.name


def test_cells_needing_a_device_and_only_they_start_with_its_guard(lesson):
    cells = snippet_cells(generated(lesson))
    for snippet, (source, cell) in zip(shown_snippets(lesson), cells):
        for text in (cell.source, source):
            assert (GUARD.match(text) or [""])[0] == guard(snippet), (snippet.name, text[:60])


def test_the_guard_and_the_spawn_tests_are_not_vacuous():
    every = [s for lesson in LESSONS for s in shown_snippets(lesson)]
    assert any(guard(s) for s in every) == any(t.device for t in TARGETS)
    assert any(spawns(s.display_source()) for s in every), (
        "no snippet uses multiprocessing any more: drop test_snippets_that_spawn_processes_run_from_a_file"
    )


def test_snippets_that_spawn_processes_run_from_a_file(lesson):
    nb = generated(lesson)
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    spawning = [s for s in shown_snippets(lesson) if spawns(s.display_source())]
    for snippet in spawning:
        file = PurePosixPath(snippet.name).name
        i = sources.index(f"%%writefile {file}\n{snippet.display_source().rstrip()}")
        assert unguarded(sources[i + 1]) == f"%run {file}"


def test_material_syntax_becomes_plain_markdown():
    page = """\
# Title

Read [part 1](vectorise.md), [a snippet](measure.md#my-lesson-06-measure), [the
recordings](recordings.md) and [PyTorch](https://pytorch.org).

!!! tip "Compare with a tolerance"
    Body line one,
    line two.

    ```python
    >>> 1 + 1
    2
    ```

??? question
    Hidden?

- [x] checked
- [ ] unchecked

<figure markdown="span">
  ![Bars of bits.](figures/bit-layouts.svg)
  <figcaption>Both halve the memory.</figcaption>
</figure>

/// recorded | my_lesson/01_intro.py
expect:
  - "x"
///

## Next
"""
    # With a published address, links to pages outside the notebook point there.
    site = dataclasses.replace(read_site(ROOT), site_url="https://lesson.example/")
    links = Links(site, {"index.md", "vectorise.md", "measure.md"}, {"my-lesson-06-measure"})
    parts = page_parts("index.md", page)
    assert [p.kind for p in parts] == ["markdown", "snippet", "markdown"]
    assert parts[1].text == "my_lesson/01_intro.py" and parts[2].text == "## Next"
    text = convert_markdown("index.md", parts[0].text, links)
    assert "[part 1](#page-vectorise)" in text
    assert "[a snippet](#my-lesson-06-measure)" in text
    assert f"[the\nrecordings]({site.url('recordings.md')})" in text  # a link that wraps
    assert "[PyTorch](https://pytorch.org)" in text
    assert (
        "**Compare with a tolerance**\n\nBody line one,\nline two.\n\n```python\n>>> 1 + 1\n2\n```\n" in text
    )
    assert (
        "<details><summary><b>Question</b></summary>\n\nHidden?\n\n</details>" in text
    )  # closed, as on the site
    assert "- checked\n- unchecked" in text
    assert "*Figure, shown on the lesson site:* Bars of bits. Both halve the memory." in text
    for raw in ("!!!", "???", "<figure", "[x]", "/// recorded", "figures/"):
        assert raw not in text, raw
    # Without one (a local build), such a link keeps its text and drops the address.
    local = Links(dataclasses.replace(site, site_url=""), {"index.md"}, set())
    assert "the\nrecordings and" in convert_markdown("index.md", parts[0].text, local)


@pytest.mark.slow
def test_it_runs_top_to_bottom_in_jupyter(live_runs, lesson):
    """Every cell in one Python kernel, top to bottom, as a reader's Jupyter runs it: the same
    run that gives the pages' claims their live output (recorded/checks/live.py), so no
    snippet runs twice. Waits for it if it is still going (about a minute on a 2-core machine)."""
    done = live_runs.notebook(lesson.name)
    assert done["error"] is None, f"the notebook's run stopped: {done['error']}"
    here = live_runs.target
    for snippet in shown_snippets(lesson):
        cell = done["cells"].get(snippet.name)
        assert cell is not None, f"{snippet.name}: its cell did not run"
        assert cell["status"] == "ok", f"{snippet.name} raised in the notebook:\n" + "\n".join(
            cell["stderr"][-25:]
        )
        stdout = "\n".join(cell["stdout"])
        device = TARGETS.device_for(snippet.requires)
        if device and not snippet.runs_on(here):
            assert stdout == device.skip_message, (snippet.name, stdout)
        else:
            assert stdout.strip() and "Skipped: this cell needs" not in stdout, (snippet.name, stdout)
