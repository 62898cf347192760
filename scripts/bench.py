#!/usr/bin/env python3
"""Measure the project's speed targets: `python scripts/bench.py [--repeat 5] [--skip peer]`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from recorded.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(root=ROOT))
