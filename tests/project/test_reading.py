"""scripts/reading.py: what its in-page counting sees on a small page made for it (a hidden
tab, a closed <details>, a folded region in code, a recorder command), and how its figures
are judged. The real pages are counted by `python scripts/reading.py`, not here."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
import reading

#: One recorded block opening on a notice (its output is in the hidden second tab), prose
#: around it with a closed <details>, a permalink and a code block with a folded region.
PAGE = """<!doctype html><html><body style="width: 390px"><article class="md-content__inner">
<h1>Two words<a class="headerlink" href="#">¶</a></h1>
<p>Prose with <code>inline_code</code>, and 10<sup>−7</sup> here.</p>
<details><summary>Open me</summary><p>words nobody sees without a click</p></details>
<pre><code>a = 1
b = 2
<details><summary># region setup</summary>c = 3
d = 4
</details>print(a + b)
</code></pre>
<div class="recorded" id="ex">
  <div class="language-python highlight"><span class="filename">lesson/ex.py</span>
    <pre><code>x = 1
print(x)
</code></pre></div>
  <div class="tabbed-set"><div class="tabbed-labels" style="display: flex; flex-wrap: wrap; width: 200px">
    <label>A rather long first label</label><label>A second long label, wrapping</label></div>
    <div class="tabbed-block"><div class="admonition"><p>Not applicable on A</p></div></div>
    <div class="tabbed-block" style="display: none"><div class="language-text"><pre><code>1
</code></pre></div><ul><li>record it with <code>python scripts/record_runs.py --target a</code></li></ul>
    </div></div>
</div></article></body></html>"""


@pytest.fixture(scope="module")
def tab() -> Iterator:
    if shutil.which("chromium") is None:
        reason = "Chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}: in CI a missing browser is a failure", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=reading.chromium(), args=reading.CHROMIUM_ARGS)
        page = browser.new_page(viewport=reading.PHONE)
        page.set_content(PAGE)
        yield page
        browser.close()


@pytest.mark.browser
def test_counts_what_shows_without_a_click(tab):
    counts = tab.evaluate(reading.MEASURE_PAGE, list(reading.COMMANDS))
    # "Two words", "Prose with inline_code, and 10−7 here.", "Open me": 2 + 6 + 2.
    assert counts["prose_words"] == 10
    # a, b, the folded region's one line, print: the region's body is behind a click.
    assert counts["prose_code_lines"] == 4
    assert counts["examples"] == [
        # The file name, the two labels (5 + 5 words) and the notice (4).
        {
            "id": "ex",
            "code_lines": 2,
            "output_lines": 0,  # its output is in the hidden tab
            "highlighted_lines": 0,
            "machinery_words": 15,
            "opens_with_output": False,
        }
    ]
    # One command (three markers in one list item), in a hidden tab.
    assert (counts["recorder_commands"], counts["recorder_commands_shown"]) == (1, 0)


@pytest.mark.browser
def test_tab_labels_that_wrap_take_rows(tab):
    assert tab.evaluate(reading.TAB_ROWS) == [{"rows": 2, "scrolls": False}]


def test_figures_are_judged_against_their_goals():
    example = reading.Example("ex", code_lines=41, machinery_words=30, opens_with_output=False)
    page = reading.Page("lesson/", 1201, 2, 1, 0, [example], tab_rows=2)
    found = {r.name: r for r in reading.rows(reading.Report("test", [page]))}
    assert found["visible prose words: /lesson/"].ok is False
    assert found["code lines shown: /lesson/"].value == 43
    assert found["code lines shown, longest example"].ok is False
    assert found["machinery words, wordiest example"].ok is True
    assert found["examples opening with no output"].value == 1
    assert found["recorder commands on lesson pages"].ok is False
    table = reading.table(reading.Report("now", [page]), reading.Report("then", []))
    assert "| visible prose words, all pages | 0 | 1,201 | ≤ 6,000 | within |" in table
