"""The site builds with Zensical, Material for MkDocs' successor, from the same mkdocs.yml.

Zensical loads Python-Markdown extensions but not MkDocs hooks or plugins; the lesson's
blocks are a Markdown extension precisely so that they survive the move.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from site_tools import copy_site

from recorded.config import targets
from recorded.pages import blocks

ROOT = Path(__file__).resolve().parents[2]
ZENSICAL = Path(sys.executable).parent / "zensical"
pytestmark = pytest.mark.build


def lesson_pages() -> list[Path]:
    pages = sorted((ROOT / "docs").glob("*.md"))
    return [p for p in pages if blocks.headers(p.read_text(encoding="utf-8").splitlines())]


@pytest.fixture(scope="module")
def zensical_site(tmp_path_factory) -> Path:
    if not ZENSICAL.exists():
        pytest.fail("zensical is not installed in this environment; `make test` installs it")
    copy = tmp_path_factory.mktemp("zensical")
    copy_site(ROOT, copy)
    done = subprocess.run(
        [ZENSICAL, "build"], cwd=copy, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return copy / "site"


@pytest.mark.parametrize("page", lesson_pages(), ids=lambda p: p.name)
def test_lesson_pages_carry_their_recorded_outputs_and_tabs(zensical_site, page):
    html = (zensical_site / page.stem / "index.html").read_text(encoding="utf-8")
    shown = [name for _, name in blocks.headers(page.read_text(encoding="utf-8").splitlines())]
    tab_sets = html.count('class="tabbed-set tabbed-alternate recorded-outputs"')
    # Each block shows its output in tabs, or once when every machine printed the same.
    assert tab_sets + html.count('class="recorded-once"') == len(shown)
    # One tab per kind that recorded the example, in the declared order, each its short label.
    order = [t.tab for t in targets.load(ROOT)]
    for labels in re.findall(r'<div class="tabbed-labels">(.*?)</div>', html):
        tabs = re.findall(r'<label for="__recorded_\d+_\d+">([^<]*)</label>', labels)
        assert tabs and tabs == sorted(tabs, key=order.index), tabs
    for name in shown:
        assert f'<span class="filename">{name}</span>' in html, f"{name}'s code is missing"
    # Each output tab either holds a recording with its provenance line or says why not.
    assert html.count('class="recorded-provenance"') + html.count('class="admonition') >= len(shown)
