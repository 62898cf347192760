#!/usr/bin/env python3
"""Record what every snippet prints, per target. `python scripts/record_runs.py --help`."""

import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Runs on a bare GPU image without installing the project: the recorder is stdlib only.
sys.path.insert(0, str(ROOT / "src"))

if __name__ == "__main__":
    # Ctrl-C or SIGTERM from the first instruction on ends in one line (recorded.__main__).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        from recorded.__main__ import entry
    except KeyboardInterrupt:
        print(f"\n{sys.argv[0]}: stopped while starting; nothing was run or written.", file=sys.stderr)
        sys.exit(130)
    sys.exit(entry(ROOT, sys.argv[0]))  # messages name the script as it was typed
