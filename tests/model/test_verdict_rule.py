"""The lesson's one rule for timing verdicts: the same text in every snippet that compares
timings, and it behaves as the measure page states.

Snippets import nothing from this project, so each carries its own copy of the rule; these
tests read the copies out of the snippets and run them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets"
RULE = ("MIN_EFFECT", "spread", "verdict")
REGION = re.compile(r"^\s*# (?:end)?region\b")


def rule_source(path: Path) -> str | None:
    """The text of the rule's three definitions in a snippet, or None if it has none."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    parts: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in RULE:
            key = node.name
        elif isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "MIN_EFFECT" for t in node.targets
        ):
            key = "MIN_EFFECT"
        else:
            continue
        segment = ast.get_source_segment(source, node)
        assert segment is not None, f"{path.name}: no source text for {key}"
        # A region marker only folds the page's view of the code: it is no part of the rule.
        parts[key] = "\n".join(line for line in segment.splitlines() if not REGION.match(line))
    if not parts:
        return None
    assert set(parts) == set(RULE), f"{path.name} has only {sorted(parts)} of the rule {RULE}"
    return "\n\n".join(parts[name] for name in RULE)


def copies() -> dict[str, str]:
    found = {p.relative_to(SNIPPETS).as_posix(): rule_source(p) for p in sorted(SNIPPETS.rglob("*.py"))}
    return {name: text for name, text in found.items() if text is not None}


@pytest.fixture(scope="module")
def rule():
    texts = copies()
    namespace: dict = {}
    exec("import math\nimport statistics\n" + next(iter(texts.values())), namespace)  # noqa: S102
    return namespace


def test_every_snippet_that_prints_a_verdict_carries_the_same_rule():
    texts = copies()
    assert len(texts) >= 5, f"expected the rule in the timing snippets, found it in {sorted(texts)}"
    first, *others = texts.items()
    for name, text in others:
        assert text == first[1], (
            f"{name}'s verdict rule differs from {first[0]}'s: keep one rule, word for word"
        )


def test_a_snippet_that_prints_a_verdict_line_defines_the_rule():
    for path in sorted(SNIPPETS.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if "verdict(" in source:
            assert rule_source(path), f"{path.name} calls verdict() without the rule's definitions"


def test_the_same_timings_twice_are_within_noise(rule):
    a = [10.0, 10.2, 9.9, 10.1, 10.3, 9.8]
    assert rule["verdict"](a, list(a)) == "within noise"


def test_apart_and_beyond_ten_percent_is_faster_or_slower(rule):
    base = [10.0, 10.1, 9.9, 10.2, 9.8, 10.0]
    quick = [5.0, 5.1, 4.9, 5.2, 4.8, 5.0]
    assert rule["verdict"](base, quick) == "faster"
    assert rule["verdict"](quick, base) == "slower"


def test_apart_but_under_ten_percent_is_within_noise(rule):
    base = [10.0, 10.01, 10.02, 10.03, 10.04]
    near = [9.5, 9.51, 9.52, 9.53, 9.54]  # 5% lower, spreads far apart: still not called
    assert rule["verdict"](base, near) == "within noise"


def test_overlapping_spreads_are_within_noise_however_far_the_medians(rule):
    base = [10.0, 4.0, 16.0, 5.0, 15.0]
    other = [6.0, 3.0, 14.0, 4.0, 12.0]
    assert rule["verdict"](base, other) == "within noise"


@pytest.mark.parametrize(
    ("samples", "message"),
    [
        ([1.0, 2.0, 3.0, 4.0], "at least 5 timings"),
        ([1.0, 2.0, 0.0, 4.0, 5.0], "positive finite numbers"),
        ([1.0, 2.0, -3.0, 4.0, 5.0], "positive finite numbers"),
        ([1.0, 2.0, float("nan"), 4.0, 5.0], "positive finite numbers"),
        ([1.0, 2.0, "3", 4.0, 5.0], "positive finite numbers"),
    ],
)
def test_bad_samples_raise_a_clear_error_instead_of_a_verdict(rule, samples, message):
    good = [1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match=message):
        rule["verdict"](good, samples)
    with pytest.raises(ValueError, match=message):
        rule["verdict"](samples, good)


def test_no_page_asks_a_live_run_for_a_timing_verdict():
    # An `expect` claim holds in the live run too: a verdict value there would make the suite
    # a timed test that a busy machine fails. A verdict is claimed per recorded kind.
    from recorded.model import lines
    from recorded.pages import blocks

    asked = []
    for page in sorted((SNIPPETS.parent / "docs").rglob("*.md")):
        for found in blocks.read(page.read_text(encoding="utf-8")).blocks:
            spec = blocks.parse(found.argument, found.body, first_line=found.line + 1)
            for claim in spec.expect:
                said = lines.verdict(claim)
                if said and said[1] in lines.TIMING_VERDICTS:
                    asked.append(f"{page.name}: {claim!r}")
    assert asked == [], "claim these under expect_on, per kind, or write the value as ...: " + ", ".join(
        asked
    )
