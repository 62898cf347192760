"""Everything made from the recordings is what the project's one command writes now.

Each lesson's notebook and figures are drawn from its pages, snippets and recordings;
after a re-recording they are out of date until they are redrawn. One test says so, once,
with the one command that redraws them all: the other notebook and figure tests check
what the generators write, so a stale file is not reported again by each of them.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from recorded.config import lessons
from recorded.model.store import Store
from recorded.notebook import notebook_path, render
from recorded.pages import figures

ROOT = Path(__file__).resolve().parents[2]


def notebook_diff(lesson: lessons.Lesson) -> str | None:
    """A short diff of the committed notebook against a fresh one, or None if they agree."""
    path = notebook_path(ROOT, lesson)
    shown = path.relative_to(ROOT).as_posix()
    fresh, _ = render(ROOT, lesson)
    current = path.read_text(encoding="utf-8") if path.is_file() else ""
    if current == fresh:
        return None
    diff = difflib.unified_diff(
        current.splitlines(keepends=True),
        fresh.splitlines(keepends=True),
        f"{shown} (committed)",
        f"{shown} (fresh)",
        n=1,
    )
    return "".join(list(diff)[:40])


def test_the_project_makes_something_from_its_recordings():
    every = lessons.load(ROOT).values()
    assert any(lesson.notebook or lesson.figures for lesson in every), (
        "no lesson declares a notebook or figures, so the next test checks nothing"
    )


def test_everything_made_from_the_recordings_is_up_to_date():
    store = Store(ROOT)
    behind, diffs = [], []
    for lesson in lessons.load(ROOT).values():
        if lesson.notebook and (diff := notebook_diff(lesson)) is not None:
            behind.append(notebook_path(ROOT, lesson).relative_to(ROOT).as_posix())
            diffs.append(diff)
        if lesson.figures:
            folder = ROOT / "docs" / lesson.figures_dir
            stale = figures.out_of_date(store, folder, figures.lesson_figures(ROOT, lesson))
            behind += [file.relative_to(ROOT).as_posix() for file in stale]
    if behind:
        pytest.fail(
            f"made from other pages, snippets or recordings than the project holds now: "
            f"{', '.join(behind)}; run `{store.settings.commands.all}` and commit them.\n" + "\n".join(diffs),
            pytrace=False,
        )
