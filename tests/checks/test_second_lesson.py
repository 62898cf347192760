"""A course author's second lesson, through the installed engine alone.

A throwaway site in a temporary folder (tests/projects.py), with its own pyproject.toml, mkdocs.yml, one page,
one snippet, a one-statement conftest.py and a recording made by the recorder
(`python -m recorded`): it builds, its claims are tested by Sybil, a wrong claim fails
with the page and line, and a stale recording is named with the command that refreshes
it. Nothing of this project's own lesson is copied or read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from projects import Project

pytestmark = pytest.mark.build

MKDOCS = Path(sys.executable).parent / "mkdocs"

FILES = {
    "mkdocs.yml": """\
site_name: Lesson 8
theme:
  name: material
markdown_extensions:
  - admonition
  - pymdownx.highlight
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
  - recorded.pages.extension
""",
    "conftest.py": """\
from sybil import Sybil
from recorded.checks.sybil import RecordedParser

pytest_collect_file = Sybil(parsers=[RecordedParser()], path="docs", patterns=["*.md"]).pytest()
""",
    "snippets/counting/01_sum.py": """\
\"\"\"Add up the first five whole numbers.\"\"\"

print("numbers:", list(range(5)))
print("total:", sum(range(5)))
""",
    "docs/index.md": """\
# Counting

The total of 0 to 4:

/// recorded | counting/01_sum.py
expect:
  - "total: 10"
///
""",
}
CLAIM_LINE = 7  # of the expect line in docs/index.md


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300, env=env, check=False)


def pytest_in(lesson: Path) -> subprocess.CompletedProcess:
    # -p no:xdist: a plain run, as the author would start it; rootdir is the lesson folder.
    return run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(lesson),
            str(lesson / "docs"),
        ],
        lesson,
    )


def build(lesson: Path) -> subprocess.CompletedProcess:
    return run([str(MKDOCS), "build", "--strict", "-d", str(lesson / "site")], lesson)


@pytest.fixture(scope="module")
def lesson(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lesson8")
    project = Project(root).files(FILES)
    project.lesson("counting", "Counting", ["index.md"])
    done = run([sys.executable, "-m", "recorded", "--target", "cpu"], root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_the_recorder_records_the_new_lesson(lesson):
    recording = json.loads((lesson / "recordings" / "cpu" / "counting" / "01_sum.json").read_text("utf-8"))
    assert recording["status"] == "ok" and recording["stdout"][-1] == "total: 10"
    listed = run([sys.executable, "-m", "recorded", "--list"], lesson).stdout
    # Only the throwaway's own snippet: nothing of this project's lessons was read or recorded,
    # whatever they are called (a contributor's new lesson may well be called "counting" too).
    recorded = sorted(
        p.relative_to(lesson / "recordings").as_posix() for p in (lesson / "recordings").rglob("*.json")
    )
    assert recorded == ["cpu/counting/01_sum.json"], (
        f"the recorder wrote more than the throwaway lesson's one recording: {recorded}"
    )
    headers = [line for line in listed.splitlines() if line.startswith("== ")]
    assert headers == ["== Counting (snippets/counting/)"], f"--list shows other lessons: {headers}"


def test_it_builds_with_the_output_in_its_tabs(lesson):
    done = build(lesson)
    assert done.returncode == 0, done.stdout + done.stderr
    page = (lesson / "site" / "index.html").read_text(encoding="utf-8")
    assert '<span class="filename">counting/01_sum.py</span>' in page
    assert "\ntotal: 10\n</code>" in page and "hll" not in page  # shown; no highlight: unmarked
    assert "CUDA" not in page  # no GPU recorded anything: the tab is left to the recordings page


def test_its_claims_are_tested(lesson):
    done = pytest_in(lesson)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_a_wrong_claim_fails_with_the_page_and_line(lesson):
    page = lesson / "docs" / "index.md"
    good = page.read_text(encoding="utf-8")
    page.write_text(good.replace('"total: 10"', '"total: 11"'), encoding="utf-8")
    try:
        done, built = pytest_in(lesson), build(lesson)
    finally:
        page.write_text(good, encoding="utf-8")
    assert done.returncode == 1, done.stdout
    assert f"claim at docs/index.md:{CLAIM_LINE}" in done.stdout and "total: 11" in done.stdout, done.stdout
    assert built.returncode != 0 and "total: 11" in built.stdout + built.stderr


def test_a_stale_recording_is_named_with_its_fix(lesson):
    snippet = lesson / "snippets" / "counting" / "01_sum.py"
    good = snippet.read_text(encoding="utf-8")
    snippet.write_text(
        good + "pass  # edited after recording: code, so the recording is stale\n", encoding="utf-8"
    )
    try:
        done, built = pytest_in(lesson), build(lesson)
    finally:
        snippet.write_text(good, encoding="utf-8")
    assert done.returncode == 1, done.stdout
    assert "stale" in done.stdout and "python -m recorded --target cpu counting/01_sum.py" in done.stdout, (
        done.stdout
    )
    assert built.returncode != 0
    assert (
        "recording of counting/01_sum.py is of an earlier version of its code" in built.stdout + built.stderr
    )
