#!/usr/bin/env python3
"""Redraw every lesson's figures (its `figures` module in pyproject.toml) from the recordings."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from recorded.config.lessons import load  # noqa: E402 (after sys.path gains src/)
from recorded.model.store import Store  # noqa: E402 (after sys.path gains src/
from recorded.pages.figures import lesson_figures, render  # noqa: E402 (after sys.path gains src/)

if __name__ == "__main__":
    store = Store(ROOT)
    for lesson in load(ROOT).values():
        for fig in lesson_figures(ROOT, lesson):
            print(render(store, ROOT / "docs" / lesson.figures_dir, fig).relative_to(ROOT))
    sys.exit(0)
