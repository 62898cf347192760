#!/usr/bin/env python3
"""Redraw the lesson's figures in docs/figures/ from the recordings."""

import sys
from pathlib import Path

from recorded.figures import FIGURES, render
from recorded.store import Store

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    for fig in FIGURES:
        print(render(Store(ROOT), ROOT / "docs" / "figures", fig).relative_to(ROOT))
    sys.exit(0)
