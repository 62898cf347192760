"""The contributor's path, as the docs write it: "Adding lesson 8" (docs/how-it-works.md)
and "Add a machine" (docs/contributing.md), performed literally in a temporary project.

Each step's TOML and commands are read from the section itself (the fenced blocks indented
under its numbered steps), so the docs and this test
cannot drift: a new command in a section that this test does not know how to perform fails
here, naming it. `make X` runs the Makefile's own recipe for X; the recorder runs in this
process, on conftest.py's fake machine, pretending the CPU flags the new kind requires.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import tomllib

import pytest

from fakes import FAKE_MACHINE, fake_cpu
from projects import CPU, ROOT, Project
from recorded.model import machines
from recorded.model.snippets import discover
from recorded.model.store import State, Store
from rendering import output_tabs

RECORDER = "scripts/record_runs.py"


def section(doc: str, heading: str) -> str:
    """The text of docs/<doc> under `## heading`, up to the next `## `."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def fenced(text: str, lang: str) -> list[str]:
    """The contents of every ```lang block inside a numbered step (indented under it), dedented.
    A block at the margin is an aside, not a step."""
    return [
        textwrap.dedent(m.group(2))
        for m in re.finditer(rf"^([ \t]+)```{lang}\n(.*?)^\1```$", text, re.DOTALL | re.MULTILINE)
    ]


def commands(text: str) -> list[list[str]]:
    """Every command line of the section's ```sh blocks, split as a shell would, comments dropped."""
    return [
        shlex.split(line, comments=True)
        for block in fenced(text, "sh")
        for line in block.splitlines()
        if shlex.split(line, comments=True)
    ]


def recipe(target: str, variables: dict[str, str]) -> list[list[str]]:
    """The commands `make target VAR=value ...` runs, from the Makefile ($(BIN)/python is this
    interpreter), with the `$(if $(VAR),text)` and `$(VAR)` it uses filled in."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(target)}:.*\n((?:\t.+\n?)+)", makefile, re.MULTILINE)
    assert found, f"the docs say `make {target}`, which the Makefile does not define"
    commands = []
    for line in found.group(1).splitlines():
        line = re.sub(r"\$\((\w+)\)", lambda m: "python" if m[1] == "BIN" else variables.get(m[1], ""), line)
        line = re.sub(r"\$\(if ([^,]*),([^)]*)\)", lambda m: m[2] if m[1].strip() else "", line)
        commands.append(shlex.split(line.replace("python/python", "python")))
    return commands


def perform(project: Project, argv: list[str]) -> int:
    """Run one documented command in the project: the recorder in this process, scripts as
    their own process (with this interpreter), `make X` as its recipe, line by line."""
    if argv[:1] == ["make"]:
        target, *assignments = argv[1:]
        variables = dict(a.split("=", 1) for a in assignments)
        for command in recipe(target, variables):
            if (code := perform(project, command)) != 0:
                return code
        return 0
    python = argv[0] in ("python", "python3", ".venv/bin/python")
    assert python and len(argv) > 1 and argv[1].startswith("scripts/"), (
        f"the docs say `{shlex.join(argv)}`, which this test does not know how to perform: teach it"
    )
    if argv[1] == RECORDER:
        return project.record(*argv[2:])
    script = project.root / argv[1]
    script.parent.mkdir(exist_ok=True)
    shutil.copy(ROOT / argv[1], script)
    done = subprocess.run(
        [sys.executable, str(script), *argv[2:]],
        cwd=project.root,
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{shlex.join(argv)}:\n{done.stdout}{done.stderr}"
    return done.returncode


def pretend_flags(monkeypatch, flags: list[str]) -> None:
    """This machine has these CPU flags, for the recorder's look and for what it stores."""
    monkeypatch.setattr(machines, "this_cpu", lambda extra=(): fake_cpu(flags))
    monkeypatch.setitem(FAKE_MACHINE, "cpu", fake_cpu(flags))


MKDOCS = """\
site_name: A course
nav:
  - counting/index.md
markdown_extensions:
  - recorded.pages.extension
"""
PAGE = """\
# Counting

/// recorded | counting/01_sum.py
expect:
  - "total: 10"
///

/// recorded | counting/02_max.py
///
"""


@pytest.fixture
def course(tmp_path, fake_machine) -> Project:
    """A course with one kind of machine and, per "Adding lesson 8" step 1, a lesson's files."""
    project = Project(tmp_path).files({"mkdocs.yml": MKDOCS, "docs/counting/index.md": PAGE})
    project.targets(CPU)
    project.snippet("counting/01_sum.py", 'print("total:", sum(range(5)))\n')
    project.snippet("counting/02_max.py", 'print("max:", max(range(5)))\n')
    return project


def fresh(project: Project, target: str) -> dict[str, State]:
    store = Store(project.root)
    return {
        s.name: store.standing(s, store.targets[target]).state
        for s in discover(store.snippets_dir, store.targets)
    }


def test_adding_a_lesson_as_the_docs_say(course):
    steps = section("how-it-works.md", "Adding lesson 8")
    (lesson,) = fenced(steps, "toml")
    course.targets(lesson)

    for argv in commands(steps):
        assert perform(course, argv) == 0, shlex.join(argv)

    assert set(fresh(course, "cpu").values()) == {State.FRESH}
    declared = tomllib.loads(lesson)["tool"]["recorded"]["lessons"]["counting"]
    notebook = course.root / "docs" / declared["notebook"]
    assert "total: 10" in notebook.read_text(encoding="utf-8")


@pytest.mark.parametrize("required", [True, False], ids=["required", "not-required"])
def test_adding_a_machine_as_the_docs_say(course, monkeypatch, capsys, required):
    steps = section("contributing.md", "Add a machine")
    course.lesson("counting", "Counting", ["counting/index.md"], notebook="counting.ipynb")
    assert course.record() == 0 and perform(course, ["make", "notebook"]) == 0  # the course before
    declared, *_ = fenced(steps, "toml")
    if not required:
        declared = declared.replace("required = true", "required = false")
    course.targets(declared)
    ((name, target),) = tomllib.loads(declared)["tool"]["recorded"]["targets"].items()
    pretend_flags(monkeypatch, [])  # a machine of another kind
    capsys.readouterr()

    # Step 2, as it says: required, --check fails naming each snippet; not, only --strict
    # does, even on a machine of the new kind: a kind with no recording yet is a note.
    assert course.record("--check") == (1 if required else 0)
    assert course.record("--check", "--strict") == 1
    assert "counting/01_sum.py" in capsys.readouterr().out
    pretend_flags(monkeypatch, target["requires"]["flags"])
    assert course.record("--check") == (1 if required else 0)

    for argv in commands(steps):
        assert perform(course, argv) == 0, shlex.join(argv)

    assert set(fresh(course, name).values()) == {State.FRESH}
    assert course.record("--check", "--strict") == 0
    assert perform(course, ["python", "scripts/make_notebook.py", "--check"]) == 0  # make notebook ran
    html = course.render(PAGE)  # both kinds printed alike: each block shown once, naming both
    assert output_tabs(html) == [] and html.count("Printed alike on 2 machines.") == 2
    assert "not recorded yet" not in html.lower()


def test_a_plain_record_run_records_a_kind_that_is_not_required_by_itself(course, monkeypatch):
    """Step 2's last sentence: `make record` (no --target) records the new kind too."""
    declared, *_ = fenced(section("contributing.md", "Add a machine"), "toml")
    course.targets(declared.replace("required = true", "required = false"))
    ((name, target),) = tomllib.loads(declared)["tool"]["recorded"]["targets"].items()
    pretend_flags(monkeypatch, target["requires"]["flags"])

    assert perform(course, ["make", "record"]) == 0

    assert set(fresh(course, name).values()) == {State.FRESH}


def test_the_steps_are_read_from_the_docs():
    """Each section shows its TOML and its commands, so the tests above perform something."""
    lesson, machine = (
        section("how-it-works.md", "Adding lesson 8"),
        section("contributing.md", "Add a machine"),
    )
    assert fenced(lesson, "toml") and commands(lesson)
    # One command records the new kind and redraws what is made from the recordings.
    assert fenced(machine, "toml") and any(c[:2] == ["make", "record"] for c in commands(machine))
    assert "requires = { gpu = true }` is refused" in machine and 'device = "cuda"' in machine
