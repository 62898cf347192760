"""`python -m recorded`: the recorder, for the project in the current folder (as scripts/record_runs.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .cli import MODULE, main


def entry(root: Path | None = None, prog: str = MODULE) -> int:
    """The recorder's command line, quiet when its reader stops reading: `--list | head`
    ends the listing, not in a BrokenPipeError traceback. ``prog``: how it was started
    (cli.MODULE, or a script's path as typed), for its messages."""
    try:
        code = main(root=root, prog=prog)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(entry())
