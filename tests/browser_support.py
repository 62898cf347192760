"""What tests/project/test_browser.py uses beside its fixtures and tests: building and serving the
site, reading which tab each recorded output shows, measuring text contrast, and running
axe-core on a page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

MKDOCS = Path(sys.executable).parent / "mkdocs"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
MIN_CONTRAST = 4.5  # WCAG AA for normal-size text
PALETTES = ("default", "slate")  # Material's light and dark schemes

# For each recorded block on the page, the label of the tab whose output is shown.
SHOWN_TABS = """() => [...document.querySelectorAll('article .recorded-outputs')].map(set => {
  const labels = [...set.querySelectorAll(':scope > .tabbed-labels > label')];
  const blocks = [...set.querySelectorAll(':scope > .tabbed-content > .tabbed-block')];
  return labels.filter((_, i) => blocks[i].checkVisibility()).map(l => l.textContent.trim()).join('+');
})"""

# For each recorded block on the page, the labels of its tabs, in order.
TAB_LABELS = """() => [...document.querySelectorAll('article .recorded-outputs')].map(set =>
  [...set.querySelectorAll(':scope > .tabbed-labels > label')].map(l => l.textContent.trim()))"""

# Every visible element under root with text of its own: its colour (faded by any opacity)
# and the backgrounds behind it, innermost first, down to the first opaque one.
TEXT_COLOURS = """root => {
  const rgba = s => {
    const m = s.match(/^rgba?\\(([^)]*)\\)$/);
    if (!m) throw new Error('cannot read the colour ' + s);
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const found = [];
  for (const el of [root, ...root.querySelectorAll('*')]) {
    const ownText = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!ownText || !el.checkVisibility()) continue;
    const layers = [];
    let opacity = 1;  // an element's opacity and its ancestors' fade its text as well
    for (let n = el; n; n = n.parentElement) opacity *= parseFloat(getComputedStyle(n).opacity);
    for (let n = el; n; n = n.parentElement) {
      const bg = rgba(getComputedStyle(n).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    found.push({what: el.tagName.toLowerCase() + (el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : ''),
                text: el.textContent.trim().slice(0, 50), layers,
                colour: (c => [c[0], c[1], c[2], c[3] * opacity])(rgba(getComputedStyle(el).color))});
  }
  return found;
}"""

NO_TRANSITIONS = "*, *::before, *::after { transition: none !important; animation: none !important; }"


# -- helpers -------------------------------------------------------------------------------


def mkdocs_build(root: Path, site: Path, strict: bool = True, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(
        [str(MKDOCS), "build", "--strict" if strict else "--no-strict", "-d", str(site)],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **(env or {})},
    )
    assert result.returncode == 0, f"mkdocs build failed in {root}:\n{result.stdout}\n{result.stderr}"


def relative_luminance(rgb) -> float:
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def over(top, bottom):
    """An RGBA colour painted over an opaque RGB one."""
    alpha = top[3]
    return [top[i] * alpha + bottom[i] * (1 - alpha) for i in range(3)]


def contrast(foreground, background) -> float:
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def lowest_contrast(locator) -> tuple[float, str]:
    """The weakest text-to-background contrast inside the element, and which text it is."""
    found = locator.evaluate(TEXT_COLOURS)
    assert found, f"no visible text in {locator}"
    results = []
    for item in found:
        background = [255, 255, 255]  # the canvas, should no ancestor be opaque
        for layer in reversed(item["layers"]):
            background = over(layer, background)
        ratio = contrast(over(item["colour"], background), background)
        results.append((round(ratio, 2), f"{item['what']} {item['text']!r}"))
    return min(results)


def contrast_in_both_palettes(page: Page, locator) -> dict[str, tuple[float, str]]:
    # Material animates colour changes; without this the dark palette is read half-way.
    page.add_style_tag(content=NO_TRANSITIONS)
    ratios = {}
    for scheme in PALETTES:
        page.evaluate("s => document.body.setAttribute('data-md-color-scheme', s)", scheme)
        ratios[scheme] = lowest_contrast(locator)
    return ratios


def assert_readable(what: str, ratios: dict[str, tuple[float, str]]) -> None:
    weak = {scheme: r for scheme, r in ratios.items() if r[0] < MIN_CONTRAST}
    assert not weak, f"{what}: contrast below {MIN_CONTRAST} in {weak}"


def tabs_once_all_show(page: Page, label: str, timeout_ms: int = 5000) -> list[str]:
    """The tab each recorded output shows, once every output that has a ``label`` tab shows it
    (or the wait is over); outputs without one keep showing their own."""
    all_show = (
        f"() => {{ const t = ({SHOWN_TABS})(); const l = ({TAB_LABELS})(); "
        f"return t.length > 0 && t.every((x, i) => x === {label!r} || !l[i].includes({label!r})); }}"
    )
    try:
        page.wait_for_function(all_show, timeout=timeout_ms)
    except PlaywrightTimeoutError:
        pass  # the caller's assertion shows what is shown instead
    return page.evaluate(SHOWN_TABS) or ["(no recorded outputs)"]


#: A desktop screen and a phone, in CSS pixels.
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def axe_run(browser, url: str, axe: Path, scheme: str, before: str = "", viewport=DESKTOP) -> dict:
    """axe-core's WCAG 2.1 A and AA rules on one page in one palette and one screen size
    (after the script `before`)."""
    context = browser.new_context(color_scheme="dark" if scheme == "slate" else "light", viewport=viewport)
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        page.add_style_tag(content=NO_TRANSITIONS)
        page.evaluate("s => document.body.setAttribute('data-md-color-scheme', s)", scheme)
        if before:
            page.evaluate(before)
        page.add_script_tag(path=str(axe))
        return page.evaluate("tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})", AXE_TAGS)
    finally:
        context.close()
