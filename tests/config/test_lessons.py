"""Lessons as data: [tool.recorded.lessons.<folder>] in pyproject.toml."""

from __future__ import annotations

import tomllib

import pytest

from recorded.config.lessons import LessonError, lesson_of, parse

GOOD = """\
[tool.recorded.lessons.zeta]
title = "Zeta"
pages = ["zeta/intro.md", "zeta/more.md"]
notebook = "zeta.ipynb"
notebook_skip = { "zeta/intro.md" = ["About this site"] }
figures = "scripts/figures/zeta.py"
"""


def lessons(text: str):
    return parse(tomllib.loads(text))


def test_a_lesson_entry_is_read_with_its_defaults():
    (zeta,) = lessons(GOOD).values()
    assert (zeta.name, zeta.title, zeta.slug) == ("zeta", "Zeta", "zeta")
    assert zeta.pages == ("zeta/intro.md", "zeta/more.md") and zeta.notebook == "zeta.ipynb"
    assert zeta.notebook_skip == {"zeta/intro.md": frozenset({"About this site"})}
    assert zeta.figures_dir == "figures" and zeta.notebook_note == ""
    assert lessons("") == {}


def test_a_snippet_belongs_to_its_folder():
    assert lesson_of("zeta/01_a.py") == "zeta" and lesson_of("top.py") == ""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('title = "Zeta"\n', ""), "lacks"),
        (('title = "Zeta"', "title = 3"), "title must be a string, got 3"),
        (
            ('pages = ["zeta/intro.md", "zeta/more.md"]', 'pages = ["../outside.md"]'),
            "pages must be a list of pages",
        ),
        (
            ('pages = ["zeta/intro.md", "zeta/more.md"]', 'pages = ["intro.txt"]'),
            "pages must be a list of pages",
        ),
        (
            ('notebook = "zeta.ipynb"', 'notebook = "zeta.md"'),
            "notebook must be a path under docs/ ending in .ipynb",
        ),
        (
            ('figures = "scripts/figures/zeta.py"', 'figures = "/abs/zeta.py"'),
            "figures must be a path to a Python file",
        ),
        (('"zeta/intro.md" = ["About', '"zeta/other.md" = ["About'), "notebook_skip names ['zeta/other.md']"),
        (('title = "Zeta"', 'title = "Zeta"\ncolour = "red"'), "unknown key(s) ['colour']"),
    ],
)
def test_a_badly_declared_lesson_names_the_key_and_what_to_write(change, message):
    old, new = change
    with pytest.raises(LessonError) as caught:
        lessons(GOOD.replace(old, new))
    text = str(caught.value)
    assert text.startswith("pyproject.toml: [tool.recorded.lessons.zeta]") and message in text, text


def test_two_lessons_may_not_write_one_notebook():
    twice = GOOD + GOOD.replace("lessons.zeta]", "lessons.eta]").replace("zeta/", "eta/")
    with pytest.raises(LessonError, match="two lessons write the same notebook"):
        lessons(twice)
