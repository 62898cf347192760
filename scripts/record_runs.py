#!/usr/bin/env python3
"""Record what every snippet prints, per target. `python scripts/record_runs.py --help`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Runs on a bare GPU image without installing the project: the recorder is stdlib only.
sys.path.insert(0, str(ROOT / "src"))

from recorded.__main__ import entry  # noqa: E402 (after sys.path gains src/)

if __name__ == "__main__":
    sys.exit(entry(ROOT, sys.argv[0]))  # messages name the script as it was typed
