"""`mkdocs build --strict` on the real project, and on copies broken in one way each.

Each build takes about a second, so there is one good build and one per kind of breakage.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from recorded import blocks, describe, targets
from recorded.layout import copy_site
from recorded.snippets import load
from recorded.store import Store

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"
MAX_NOTEBOOK_BYTES = 300_000  # the notebook page's HTML (mkdocs-jupyter alone inlines 574 KB of CSS)


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    # The environment passes through as it is: with RECORDINGS_STRICT=1 (the release rule)
    # a missing CUDA recording fails this build, as it should.
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "-d", str(site)],
        cwd=root, capture_output=True, text=True, timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


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


def test_real_site_shows_the_recorded_output_in_a_tab_per_target(built_site):
    page = (built_site / "sixteen-bit" / "index.html").read_text(encoding="utf-8")
    snippet = load(ROOT / "snippets", "making_it_fast/02_float16_limits.py")
    recording = Store(ROOT).read(snippet.name, "cpu")

    (tabs,) = [t for t in output_tabs(page) if "float16 max: 65504" in t.get("CPU", "")]

    declared = targets.load(ROOT)
    assert list(tabs) == [t.label for t in declared]
    assert '<span class="hll">float16 max: 65504\n</span>' in tabs["CPU"]
    line = describe.provenance(recording, declared.get("cpu").description)
    assert f'<p class="recorded-provenance">{html.escape(line)}</p>' in tabs["CPU"]
    assert 'class="filename">making_it_fast/02_float16_limits.py</span>' in page


def test_the_notebook_page_is_light_and_shows_every_recorded_output(built_site):
    page = built_site / "lesson" / "index.html"
    text = page.read_text(encoding="utf-8")
    assert page.stat().st_size <= MAX_NOTEBOOK_BYTES, (
        f"lesson/index.html is {page.stat().st_size} bytes (limit {MAX_NOTEBOOK_BYTES})")
    assert "jp-Notebook" not in text and "--jp-" not in text, "mkdocs-jupyter's JupyterLab markup or CSS is back"
    notebook = nbformat.read(ROOT / "docs" / "lesson.ipynb", as_version=4)
    outputs = [o.text for c in notebook.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "stream"]
    assert outputs, "the notebook holds no recorded outputs"
    for output in outputs:
        assert html.escape(output.strip("\n"), quote=False) in text, f"an output is not on the page: {output[:80]!r}"
    # The download button (overrides/main.html) and the file it downloads.
    assert re.search(r'<a href="[^"]*lesson\.ipynb"[^>]*\bdownload\b', text), "no download button"
    assert (built_site / "lesson" / "lesson.ipynb").read_bytes() == (ROOT / "docs" / "lesson.ipynb").read_bytes()


def test_search_finds_each_text_once(built_site):
    """The notebook repeats the lesson pages, so it stays out of the index; no text is indexed twice."""
    docs = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    assert any(d["location"].startswith("sixteen-bit/") for d in docs), "the lesson pages are not indexed"
    assert not [d["location"] for d in docs if d["location"].startswith("lesson/")], \
        "the notebook page is in the search index"
    seen, twice = {}, []
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
    replace_line(root / "docs" / page, line, "/// recorded | making_it_fast/99_no_such_snippet.py")
    return [f"{page}:{line}:", "making_it_fast/99_no_such_snippet.py", "no such snippet"]


def corrupt_the_cpu_recording(root: Path, page: str, line: int, snippet: str) -> list[str]:
    path = Store(root).path(snippet, "cpu")
    path.write_text("{not json\n", encoding="utf-8")
    return [f"{page}:{line}:", path.relative_to(root).as_posix(), "not a readable JSON recording"]


def break_the_yaml(root: Path, page: str, line: int, snippet: str) -> list[str]:
    replace_line(root / "docs" / page, line, f"/// recorded | {snippet}\nexpect: [unclosed")
    return [f"{page}:{line}:", "not valid YAML"]


def replace_line(path: Path, line: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("breakage", [name_a_missing_snippet, corrupt_the_cpu_recording, break_the_yaml],
                         ids=lambda f: f.__name__)
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
