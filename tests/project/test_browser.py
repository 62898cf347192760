"""Chromium against the built site: what a reader sees, clicks and downloads.

One build, one local server and one browser serve the whole module. Every page is loaded
once, in a fresh context so nothing comes from a cache, and what it did is kept for the
tests on requests, weight, headings, tables and images. Accessibility is checked with
axe-core (the npm package, which .ci/run installs into .cache/npm) on every page in both
palettes: no WCAG 2.1 A or AA violation anywhere. The helpers (build, serve, contrast,
axe) are in browser_support.py.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from site_tools import copy_site, site_pages
from site_tools import serve_site as serve

from browser_support import (
    DESKTOP,
    PHONE,
    SHOWN_TABS,
    TAB_LABELS,
    assert_readable,
    axe_run,
    contrast_in_both_palettes,
    mkdocs_build,
    tabs_once_all_show,
)
from recorded.config.targets import load as load_targets
from recorded.model.snippets import strip_metadata

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MAX_PAGE_BYTES = 1_500_000
MAX_NOTEBOOK_ELEMENTS = 1_500  # the notebook page's DOM, once Material's scripts have run
AXE = ROOT / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
# The tabs, in order, as pyproject.toml declares them: the tests name no target themselves.
TARGETS = list(load_targets(ROOT))
GPU = next(t for t in TARGETS if t.needs_device)

# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        reason = "Chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}: in CI a missing browser is a failure", pytrace=False)
        pytest.skip(reason)
    return path


def missing(reason: str) -> None:
    """Skip here; fail in CI, where every tool the tests need is installed by .ci/run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: in CI this is a failure", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def axe() -> Path:
    if not AXE.is_file():
        missing(
            f"axe-core is not installed ({AXE.relative_to(ROOT)} is missing: "
            "npm install --prefix .cache/npm axe-core; .ci/run installs it)"
        )
    return AXE


@pytest.fixture(scope="module")
def browser(chromium) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def site(chromium, tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("browser") / "site"
    mkdocs_build(ROOT, site)
    return site


@pytest.fixture(scope="module")
def base_url(site) -> Iterator[str]:
    with serve(site) as url:
        yield url


@pytest.fixture
def page(browser) -> Iterator[Page]:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    yield context.new_page()
    context.close()


@dataclass
class Visit:
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bytes: int = 0
    headings: list[int] = field(default_factory=list)
    tables_without_th: int = 0
    images: list[dict] = field(default_factory=list)
    elements: int = 0


@pytest.fixture(scope="module")
def visits(browser, site, base_url) -> dict[str, Visit]:
    """Each page of the site, loaded once with an empty cache, and what it did."""
    visits, open_pages = {}, []
    # All pages load at once: each waits half a second for the network to go idle.
    for path in site_pages(site):
        visit = visits[path] = Visit()
        context = browser.new_context()
        responses: list = []  # playwright Response objects
        context.on("request", lambda r, v=visit: v.requests.append(r.url))
        context.on("response", lambda r, rs=responses: rs.append(r))
        page = context.new_page()
        page.on("console", lambda m, v=visit: m.type == "error" and v.errors.append(m.text))
        page.on("pageerror", lambda e, v=visit: v.errors.append(str(e)))
        page.goto(base_url + path, wait_until="commit")
        open_pages.append((visit, page, responses))
    for visit, page, responses in open_pages:
        page.wait_for_load_state("networkidle")
        visit.bytes = sum(len(r.body()) for r in responses)
        visit.headings = page.eval_on_selector_all(
            "article h1, article h2, article h3, article h4, article h5, article h6",
            "hs => hs.map(h => Number(h.tagName[1]))",
        )
        visit.tables_without_th = page.eval_on_selector_all(
            "article table", "ts => ts.filter(t => !t.querySelector('th')).length"
        )
        visit.images = page.eval_on_selector_all(
            "img", "is => is.map(i => ({src: i.getAttribute('src'), alt: i.getAttribute('alt')}))"
        )
        visit.elements = page.evaluate("document.getElementsByTagName('*').length")
        page.context.close()
    return visits


# -- tests ---------------------------------------------------------------------------------


def test_every_page_loads_without_errors_or_outside_requests(visits):
    assert "sixteen-bit/" in visits, sorted(visits)
    problems = {}
    for path, visit in visits.items():
        outside = [
            u
            for u in visit.requests
            if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname != "127.0.0.1"
        ]
        if outside or visit.errors:
            problems[path or "(home)"] = {"outside requests": outside, "console errors": visit.errors}
    assert not problems, problems


def test_each_page_transfers_under_the_weight_limit(visits):
    heavy = {path or "(home)": v.bytes for path, v in visits.items() if v.bytes >= MAX_PAGE_BYTES}
    assert not heavy, f"pages over {MAX_PAGE_BYTES} bytes in all: {heavy}"


def test_the_notebook_page_stays_under_the_element_limit(visits):
    notebook = visits["lesson/"]
    assert notebook.elements <= MAX_NOTEBOOK_ELEMENTS, (
        f"the notebook page has {notebook.elements} DOM elements (limit {MAX_NOTEBOOK_ELEMENTS}); "
        "overrides/hooks/notebook_page.py renders it light"
    )


def test_the_accessibility_check_finds_a_violation_it_is_shown(browser, base_url, axe):
    """The harness below can fail: grey on grey text put on a page is reported."""
    result = axe_run(
        browser,
        base_url,
        axe,
        "default",
        before="""document.querySelector('article')
        .insertAdjacentHTML('beforeend', '<p style="color:#777;background:#888">grey on grey</p>')""",
    )
    assert "color-contrast" in [v["id"] for v in result["violations"]]


# Each palette once, and each screen size once: axe decides some contrasts only at one
# width (at 1280 px it left the folded regions' line count undecided, behind an icon; at
# 390 px it measured 3.8:1), and a page's colours do not change with its width.
@pytest.mark.parametrize(
    ("scheme", "viewport"), [("default", DESKTOP), ("slate", PHONE)], ids=["light-desktop", "dark-phone"]
)
def test_no_page_has_a_wcag_aa_violation(browser, site, base_url, axe, scheme, viewport):
    """axe-core's WCAG 2.1 A and AA rules on every page, light on a desktop, dark on a phone."""
    found: dict[str, list] = {}
    for path in site_pages(site):
        result = axe_run(browser, base_url + path, axe, scheme, viewport=viewport)
        # Contrast was really measured on the page, not skipped for want of visible text.
        assert "color-contrast" in [p["id"] for p in result["passes"]], (
            f"{path}: axe checked no text contrast"
        )
        for v in result["violations"]:
            nodes = v["nodes"]
            found.setdefault(path or "(home)", []).append(
                f"{v['id']} ({v['help']}): {len(nodes)} element(s), first {nodes[0]['target']}: "
                + nodes[0]["failureSummary"].replace("\n", " ")
            )
    assert not found, f"WCAG 2.1 AA violations in the {scheme} palette:\n" + "\n".join(
        f"  {path}: {line}" for path, lines in found.items() for line in lines
    )


def test_search_dialog_and_task_list_checkboxes_have_names(page, base_url):
    page.goto(base_url + "measure/")
    assert page.get_attribute(".md-search[role=dialog]", "aria-label")
    boxes = page.locator(".task-list-item input[type=checkbox]")
    assert boxes.count() >= 1
    for box in boxes.all():
        label = box.get_attribute("aria-label") or ""
        item = box.locator("xpath=ancestor::li[1]").inner_text()
        assert label and label in item.replace("\n", " "), (label, item)


# An output shown once for every machine (sixteen-bit/), and outputs in tabs (measure/).
@pytest.mark.parametrize("path", ["sixteen-bit/", "measure/"])
def test_provenance_line_sits_apart_from_its_output_box(page, base_url, path):
    page.goto(base_url + path)
    # The first provenance element after each output; a list under its own heading line
    # ("Printed alike on these 4 kinds of machine:") follows that line, not the output.
    gaps = page.eval_on_selector_all(
        "article .recorded-provenance",
        """ps => ps
      .filter(p => p.checkVisibility() && !p.previousElementSibling.matches('.recorded-provenance'))
      .map(p => p.getBoundingClientRect().top - p.previousElementSibling.getBoundingClientRect().bottom)""",
    )
    assert gaps and min(gaps) >= 8, f"pixels between each output box and its provenance line: {gaps}"


def test_headings_never_skip_a_level(visits):
    skipped = {}
    for path, visit in visits.items():
        levels = visit.headings
        if not levels or levels[0] != 1 or any(b > a + 1 for a, b in itertools.pairwise(levels)):
            skipped[path or "(home)"] = levels
    assert not skipped, f"heading levels in the article, in order: {skipped}"


def test_every_table_has_header_cells(visits):
    bare = {path or "(home)": v.tables_without_th for path, v in visits.items() if v.tables_without_th}
    assert not bare, f"tables without <th>: {bare}"


def test_every_image_has_alt_text(visits):
    images = {path: v.images for path, v in visits.items()}
    assert any(images.values()), "no <img> on any page: were the figures dropped?"
    missing = {
        path or "(home)": [i["src"] for i in imgs if not (i["alt"] or "").strip()]
        for path, imgs in images.items()
    }
    missing = {path: srcs for path, srcs in missing.items() if srcs}
    assert not missing, f"images without alt text: {missing}"


def test_every_example_opens_on_its_first_recorded_kind_with_an_output(page, base_url, site):
    order = [t.tab for t in TARGETS]
    for path in site_pages(site):
        page.goto(base_url + path)
        shown, labels = page.evaluate(SHOWN_TABS), page.evaluate(TAB_LABELS)
        assert shown == [tabs[0] for tabs in labels], f"{path}: opens on {shown}, its tabs are {labels}"
        assert all(tabs == sorted(tabs, key=order.index) for tabs in labels), f"{path}: {labels}"
        empty = page.evaluate(
            """() => [...document.querySelectorAll('article div.recorded')]
                .filter(b => ![...b.querySelectorAll('.recorded-output')].some(o => o.checkVisibility()))
                .map(b => b.id)"""
        )
        assert empty == [], f"{path}: examples that open on no output: {empty}"


def test_choosing_a_gpu_tab_once_switches_every_output_that_has_one_and_is_kept_across_pages(page, base_url):
    gpu = GPU.tab
    page.goto(base_url + "measure/")
    labels = page.evaluate(TAB_LABELS)
    assert sum(gpu in tabs for tabs in labels) >= 2 and any(tabs[0] != gpu for tabs in labels), labels
    index = next(i for i, tabs in enumerate(labels) if gpu in tabs and tabs[0] != gpu)
    page.locator("article .recorded-outputs").nth(index).get_by_text(gpu, exact=True).click()
    after = tabs_once_all_show(page, gpu)
    assert all(shown == gpu for shown, tabs in zip(after, labels) if gpu in tabs), (
        f"after choosing {gpu}: {after}"
    )

    page.locator("a.md-footer__link--next").click()  # navigation.instant: no full reload
    page.wait_for_url(lambda url: "/measure/" not in url)
    kept, there = tabs_once_all_show(page, gpu), page.evaluate(TAB_LABELS)
    assert all(shown == gpu for shown, tabs in zip(kept, there) if gpu in tabs), f"{page.url}: {kept}"

    page.goto(base_url + "vectorise/")
    kept, there = tabs_once_all_show(page, gpu), page.evaluate(TAB_LABELS)
    assert any(gpu in tabs for tabs in there) and all(
        shown == gpu for shown, tabs in zip(kept, there) if gpu in tabs
    ), f"{page.url}, loaded afresh: {kept}"


# On a phone these tables stack each row instead of scrolling sideways (recorded.css).
@pytest.mark.parametrize(
    ("path", "table"),
    [
        ("machines/", ".machine-table"),
        ("how-it-works/", ".file-map"),
        ("recordings/", ".recordings-inventory"),
    ],
)
def test_a_wide_table_on_a_phone_fits_and_each_value_keeps_its_name(browser, base_url, path, table):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(base_url + path)
    shown = page.eval_on_selector(
        f"article {table} table",
        """t => ({right: t.getBoundingClientRect().left + t.scrollWidth,
                 room: document.documentElement.clientWidth,
                 cells: [...t.querySelectorAll('tbody tr:first-child td')].map(td =>
                   [td.getBoundingClientRect().left, getComputedStyle(td, '::before').content])})""",
    )
    context.close()
    assert shown["right"] <= shown["room"], (
        f"{path}: the table ends at {shown['right']} px of {shown['room']}"
    )
    lefts = {round(left) for left, _ in shown["cells"]}
    assert len(lefts) == 1, f"{path}: a row's cells stand side by side: {shown['cells']}"
    names = [content.strip('"') for _, content in shown["cells"]]
    if table == ".machine-table":  # each value is named by its machine, as the tabs are
        assert names == [*(t.tab for t in TARGETS), "Differs"], names
    if table == ".recordings-inventory":  # under the snippet, each value named by its column
        assert names == ["none", "target", "state", "run time", "recorded", "machine"], names


def test_copy_button_copies_the_snippet_without_its_metadata_header(page, base_url):
    name = "making_it_fast/02_float16_limits.py"
    expected = strip_metadata((ROOT / "snippets" / name).read_text(encoding="utf-8"))
    page.goto(base_url + "sixteen-bit/")
    code = page.locator(".highlight", has=page.locator(".filename", has_text=name)).first
    code.hover()
    code.locator("button[data-md-type=copy]").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "# /// script" not in copied
    assert copied.rstrip("\n") == expected.rstrip("\n")


def test_search_for_65504_finds_the_sixteen_bit_page(page, base_url):
    page.goto(base_url)
    page.locator("input.md-search__input").click()
    page.keyboard.type("65504")
    results = page.locator(".md-search-result__item a")
    page.wait_for_selector('.md-search-result__item a[href*="sixteen-bit/"]', timeout=10000)
    assert any("sixteen-bit/" in href for href in results.evaluate_all("as => as.map(a => a.href)"))


def test_review_answers_and_cards_stay_closed_until_clicked(page, base_url):
    source = (ROOT / "docs" / "review.md").read_text(encoding="utf-8")
    expected = len(re.findall(r"(?m)^\?\?\?", source))
    page.goto(base_url + "review/")
    details = page.locator("article details")
    assert details.count() == expected >= 1, (details.count(), expected)
    for item in details.all():
        body = item.locator(":scope > :not(summary)").first
        assert item.get_attribute("open") is None and not body.is_visible(), item.inner_text()
        item.locator(":scope > summary").click()
        assert body.is_visible(), item.inner_text()


STALE_SNIPPET = "making_it_fast/01_vectorise"
# A CPU target that has recorded the snippet: on the copy below its recording is of an earlier version.
STALE_TAB = next(
    (
        t
        for t in TARGETS
        if not t.needs_device and (ROOT / "recordings" / t.name / f"{STALE_SNIPPET}.json").is_file()
    ),
    None,
)


@pytest.fixture
def stale_site(tmp_path) -> Path:
    """A copy of the project whose 01_vectorise.py changed after it was recorded, without a GPU
    recording, built under the release rule (RECORDINGS_STRICT=1) so that the page also shows
    its problem box."""
    if STALE_TAB is None:
        pytest.skip(f"no CPU target has a recording of {STALE_SNIPPET}.py to make stale")
    copy_site(ROOT, tmp_path)
    snippet = tmp_path / "snippets" / f"{STALE_SNIPPET}.py"
    snippet.write_text(
        snippet.read_text(encoding="utf-8")
        + "pass  # edited after recording: code, so every recording is stale\n",
        encoding="utf-8",
    )
    (tmp_path / "recordings" / GPU.name / f"{STALE_SNIPPET}.json").unlink(missing_ok=True)
    # Not --strict: under the release rule every earlier-version output warns, and that is what this copy is for.
    mkdocs_build(tmp_path, tmp_path / "site", strict=False, env={"RECORDINGS_STRICT": "1"})
    return tmp_path / "site"


def test_an_earlier_versions_output_the_not_recorded_line_and_the_problem_box_read_in_both_palettes(
    page, stale_site
):
    assert STALE_TAB is not None, f"no CPU target has a recording of {STALE_SNIPPET} to make stale"
    with serve(stale_site) as url:
        page.goto(url + "vectorise/")
        block = page.locator(f"#{STALE_SNIPPET.replace('_', '-').replace('/', '-')}")
        earlier = block.locator(
            ".tabbed-block:visible .recorded-earlier, .recorded-once .recorded-earlier"
        ).first
        assert (
            earlier.is_visible() and "recorded with an earlier version of this code" in earlier.inner_text()
        )
        assert_readable(
            "the earlier-version line", contrast_in_both_palettes(page, earlier.locator("summary"))
        )
        changed = earlier.locator("pre")
        assert not changed.is_visible()
        earlier.locator("summary").click()  # the lines that changed, one click away
        assert changed.is_visible() and "+pass" in changed.inner_text()
        missing = block.locator(".recorded-missing")
        assert missing.is_visible() and GPU.tab in missing.inner_text(), block.inner_html()[:500]
        assert_readable("the not-recorded line", contrast_in_both_palettes(page, missing))
        box = block.locator(".recorded-problems")
        assert box.is_visible() and "earlier version of its code" in box.inner_text()
        assert_readable("the problem box", contrast_in_both_palettes(page, box))


# The claim bar, in tabs and in an output shown once for every machine.
@pytest.mark.parametrize(
    "selector",
    [".recorded-provenance", ":is(.recorded-outputs, .recorded-once) .hll", ".recorded-region > summary"],
    ids=["provenance", "claimed-line", "folded-region"],
)
def test_custom_styles_are_readable_in_both_palettes(page, base_url, selector):
    page.goto(base_url + "sixteen-bit/")
    element = page.locator(f"article {selector}").first
    assert element.is_visible(), selector
    assert_readable(selector, contrast_in_both_palettes(page, element))
