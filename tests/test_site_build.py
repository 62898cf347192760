"""`mkdocs build --strict` on the real project, and on copies broken in one way each.

Each build takes about a second, so there is one good build and one per kind of breakage.
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recorded import blocks, describe
from recorded.layout import copy_site
from recorded.snippets import load
from recorded.store import Store

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"
#: What a build of the site reads from the project root.


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


def test_real_site_shows_the_recorded_output_in_cpu_and_cuda_tabs(built_site):
    page = (built_site / "sixteen-bit" / "index.html").read_text(encoding="utf-8")
    snippet = load(ROOT / "snippets", "making_it_fast/02_float16_limits.py")
    recording = Store(ROOT).read(snippet.name, "cpu")

    (tabs,) = [t for t in output_tabs(page) if "float16 max: 65504" in t.get("CPU", "")]

    assert list(tabs) == ["CPU", "CUDA"]
    assert '<span class="hll">float16 max: 65504\n</span>' in tabs["CPU"]
    assert (f'<p class="recorded-provenance">{html.escape(describe.provenance(recording))}</p>'
            in tabs["CPU"])
    assert 'class="filename">making_it_fast/02_float16_limits.py</span>' in page


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
