"""`mkdocs build --strict` on the real project, and on copies broken in one way each.

Each build takes about a second, so there is one good build and one per kind of breakage.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from site_tools import copy_site

from projects import Project, mkdocs_build
from recorded.model.snippets import load
from recorded.model.store import Store
from recorded.pages import blocks

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[2]


MAX_NOTEBOOK_BYTES = 300_000  # the notebook page's HTML (mkdocs-jupyter alone inlines 574 KB of CSS)


def output_tabs(page: str) -> list[dict[str, str]]:
    """Each recorded block's tabs on a built page, label -> the HTML inside that tab."""
    sets = page.split('<div class="tabbed-set tabbed-alternate recorded-outputs"')[1:]
    found = []
    for chunk in sets:
        labels = [part.split(">", 1)[1].split("<", 1)[0] for part in chunk.split("<label for=")[1:]]
        contents = chunk.split('<div class="tabbed-block">')[1:]
        found.append(dict(zip(labels, contents)))
    return found


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("build") / "site"
    result = mkdocs_build(ROOT, site)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return site


#: A throwaway project: two kinds of machine (one emulated on the other's machine), one
#: snippet that prints alike on both and one whose verdict differs, and the machine table.
THROWAWAY = {
    "mkdocs.yml": """\
site_name: Throwaway
strict: true
nav:
  - The lesson: lesson.md
  - What changes with the machine: machines.md
theme:
  name: material
  features: [content.tabs.link]
markdown_extensions:
  - admonition
  - attr_list
  - tables
  - toc:
      permalink: true
  - pymdownx.details
  - pymdownx.highlight
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
  - recorded.pages.extension
validation:
  omitted_files: warn
  absolute_links: warn
  unrecognized_links: warn
  anchors: warn
""",
    "pyproject.toml": """\
[tool.recorded.targets.big]
label = "Big CPU"
provides = ["cpu"]
description = "a big CPU as it is"
required = true

[tool.recorded.targets.big-as-small]
label = "Big CPU limited"
provides = ["cpu"]
description = "the big CPU limited"
env = { LIMIT_ISA = "SMALL" }
required = true
emulated = true
host = "big"
check = { code = "print('SMALL')", prints = "SMALL" }
""",
    "snippets/lesson/01_limits.py": 'print("max: 65504")\nprint("rounds to one: True")\n',
    "snippets/lesson/02_speed.py": 'print("faster here: faster")\n',
    # Written out as a lesson page is (config/test_devices.py has another): what a reader sees.
    "docs/lesson.md": """\
# The lesson

## Limits

/// recorded | lesson/01_limits.py
expect:
  - "max: 65504"
highlight: ["max: 65504"]
///

## Speed

/// recorded | lesson/02_speed.py
expect_on:
  big:
    - "faster here: faster"
highlight: ["faster here: faster"]
///
""",
    "docs/machines.md": "# What changes with the machine\n\n/// machine-table\n///\n",
}


def throwaway(root: Path, outputs: dict[tuple[str, str], list[str]]) -> Path:
    """Write THROWAWAY under root and a recording of each (snippet, target) in outputs."""
    project = Project(root).files(THROWAWAY)
    for (name, target), stdout in outputs.items():
        project.recording(
            load(root / "snippets", name),
            target,
            stdout,
            duration_s=1.5,
            busy={"before": 0.03, "after": 0.01, "window_s": 1.0, "cpus": 2},
        )
    return root


@pytest.fixture(scope="module")
def throwaway_site(tmp_path_factory) -> Path:
    root = throwaway(
        tmp_path_factory.mktemp("throwaway"),
        {
            ("lesson/01_limits.py", "big"): ["max: 65504", "rounds to one: True"],
            ("lesson/01_limits.py", "big-as-small"): ["max: 65504", "rounds to one: True"],
            ("lesson/02_speed.py", "big"): ["faster here: faster"],
            ("lesson/02_speed.py", "big-as-small"): ["faster here: slower"],
        },
    )
    result = mkdocs_build(root, root / "site")
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return root / "site"


def test_output_alike_everywhere_is_shown_once_and_outputs_that_differ_in_tabs(throwaway_site):
    page = (throwaway_site / "lesson" / "index.html").read_text(encoding="utf-8")

    (tabs,) = output_tabs(page)  # only the snippet whose output differs has tabs
    assert list(tabs) == ["Big CPU", "Big CPU limited"]
    assert re.search(
        r'<span class="hll">faster here: faster<span class="recorded-runs">\s+in 1 of 1 run</span>\n</span>',
        tabs["Big CPU"],
    )
    assert '<p class="recorded-provenance">Big CPU limited: Test CPU 9000' in tabs["Big CPU limited"]
    assert "other load" not in tabs["Big CPU"]  # a quiet machine goes unmentioned
    (once,) = re.findall(r'<div class="recorded-once">(.*?)</p></div>', page, re.DOTALL)
    assert once.count("max: 65504") == 1 and '<span class="hll">max: 65504\n</span>' in once
    # Not linked: this site has no recordings page to describe the machines.
    assert "Printed alike on 2 machines." in once


def test_the_machine_table_page_is_built_in_the_nav_with_linked_rows(throwaway_site):
    page = (throwaway_site / "machines" / "index.html").read_text(encoding="utf-8")

    assert re.search(
        r'<a href="../machines/" class="md-nav__link">\s*<span class="md-ellipsis">\s*'
        r"What changes with the machine",
        (throwaway_site / "lesson" / "index.html").read_text(encoding="utf-8"),
    )
    (table,) = re.findall(r"<table>.*?</table>", page, re.DOTALL)
    assert "<caption>lesson: each verdict line, as each kind of machine printed it</caption>" in table
    rows = re.findall(
        r'<tr class="([^"]+)">\s*<th scope="row"><code>([^<]+)</code>.*?href="([^"]+)"', table, re.DOTALL
    )
    # MkDocs rewrote the links to the built pages; --strict checked their anchors.
    assert rows == [
        ("verdict-same", "rounds to one", "../lesson/#lesson-01-limits"),
        ("verdict-changes", "faster here", "../lesson/#lesson-02-speed"),
    ]
    assert (
        '<td class="verdict-value verdict-slower" data-column="Big CPU limited">slower<br />\n'
        '<span class="verdict-runs">1 of 1 run</span></td>' in table
    )


def test_an_earlier_versions_required_recording_fails_the_build_and_the_table_marks_it(tmp_path):
    root = throwaway(
        tmp_path / "project",
        {
            ("lesson/01_limits.py", "big"): ["max: 65504", "rounds to one: True"],
            ("lesson/01_limits.py", "big-as-small"): ["max: 65504", "rounds to one: True"],
            ("lesson/02_speed.py", "big"): ["faster here: faster"],
            ("lesson/02_speed.py", "big-as-small"): ["faster here: slower"],
        },
    )
    edited = root / "snippets" / "lesson" / "02_speed.py"
    edited.write_text('print("faster here: slower")\n', encoding="utf-8")

    result = mkdocs_build(root, tmp_path / "site")

    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        "Big CPU recording of lesson/02_speed.py is of an earlier version of its code (big is marked required)"
        in output
    )
    table = (tmp_path / "site" / "machines" / "index.html").read_text(encoding="utf-8")
    assert (
        table.count("verdict-earlier") == 2
        and table.count('<span class="verdict-runs">earlier code</span>') == 2
    )


def test_the_notebook_page_is_light_and_shows_every_recorded_output(built_site):
    page = built_site / "lesson" / "index.html"
    text = page.read_text(encoding="utf-8")
    assert page.stat().st_size <= MAX_NOTEBOOK_BYTES, (
        f"lesson/index.html is {page.stat().st_size} bytes (limit {MAX_NOTEBOOK_BYTES})"
    )
    assert "jp-Notebook" not in text and "--jp-" not in text, (
        "mkdocs-jupyter's JupyterLab markup or CSS is back"
    )
    notebook = nbformat.read(ROOT / "docs" / "lesson.ipynb", as_version=4)
    outputs = [
        o.text
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream"
    ]
    assert outputs, "the notebook holds no recorded outputs"
    for output in outputs:
        assert html.escape(output.strip("\n"), quote=False) in text, (
            f"an output is not on the page: {output[:80]!r}"
        )
    # The download button (overrides/main.html) and the file it downloads.
    assert re.search(r'<a href="[^"]*lesson\.ipynb"[^>]*\bdownload\b', text), "no download button"
    assert (built_site / "lesson" / "lesson.ipynb").read_bytes() == (
        ROOT / "docs" / "lesson.ipynb"
    ).read_bytes()


def test_search_finds_each_text_once(built_site):
    """The notebook repeats the lesson pages, so it stays out of the index; no text is indexed twice."""
    docs = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    assert any(d["location"].startswith("sixteen-bit/") for d in docs), "the lesson pages are not indexed"
    assert not [d["location"] for d in docs if d["location"].startswith("lesson/")], (
        "the notebook page is in the search index"
    )
    seen: dict[str, str] = {}
    twice: list[tuple[str, str, str]] = []
    for d in docs:
        text = " ".join(d["text"].split())
        if len(text) >= 40:  # a short line ("See the answer") may stand on two pages
            if text in seen and seen[text] != d["location"]:
                twice.append((seen[text], d["location"], text[:80]))
            seen.setdefault(text, d["location"])
    assert not twice, f"the same text is indexed at two places: {twice}"


def first_block() -> tuple[str, int, str]:
    """(page under docs/, header line, snippet) of the first recorded block of the site."""
    for page in sorted((ROOT / "docs").rglob("*.md")):
        found = blocks.headers(page.read_text(encoding="utf-8").splitlines())
        if found:
            line, snippet = found[0]
            return page.relative_to(ROOT / "docs").as_posix(), line, snippet
    pytest.fail("no page in docs/ has a `/// recorded` block")


def name_a_missing_snippet(root: Path, page: str, line: int, snippet: str) -> list[str]:
    missing = f"{PurePosixPath(snippet).parent}/99_no_such_snippet.py"  # in the same lesson's folder
    replace_line(root / "docs" / page, line, f"/// recorded | {missing}")
    return [f"{page}:{line}:", missing, "no such snippet"]


def corrupt_a_recording(root: Path, page: str, line: int, snippet: str) -> list[str]:
    store = Store(root)
    path = store.path(snippet, store.targets.names[0])  # the first tab's, whatever the targets are called
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json\n", encoding="utf-8")
    return [f"{page}:{line}:", path.relative_to(root).as_posix(), "not a readable JSON recording"]


def break_the_yaml(root: Path, page: str, line: int, snippet: str) -> list[str]:
    replace_line(root / "docs" / page, line, f"/// recorded | {snippet}\nexpect: [unclosed")
    return [f"{page}:{line}:", "not valid YAML"]


def replace_line(path: Path, line: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "breakage", [name_a_missing_snippet, corrupt_a_recording, break_the_yaml], ids=lambda f: f.__name__
)
def test_broken_project_fails_the_strict_build_with_a_clear_message(tmp_path, breakage):
    root = copy_site(ROOT, tmp_path / "project")
    expected = breakage(root, *first_block())

    result = mkdocs_build(root, tmp_path / "site")

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Aborted with" in output and "in strict mode" in output
    warnings = [line for line in output.splitlines() if line.startswith("WARNING")]
    assert any(all(part in w for part in expected) for w in warnings), (
        f"no warning names all of {expected}:\n{output}"
    )
