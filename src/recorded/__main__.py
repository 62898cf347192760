"""`python -m recorded`: the recorder, for the project in the current folder (as scripts/record_runs.py)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from . import Terminated, terminate


def entry(root: Path | None = None, prog: str = "-m") -> int:
    """The recorder's command line, quiet when its reader stops reading (`--list | head`). Ctrl-C
    or SIGTERM while it starts ends in one line, as mid-run. ``prog``: how it was started
    (cli.MODULE, or a script's path as typed), for its messages."""
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        from .cli import main  # the slow part of start-up: inside the handling above

        code = main(root=root, prog=prog)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that flush is silent.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt as exc:  # cli.main handles it once it runs: this is start-up
        name = "python -m recorded" if prog == "-m" else prog
        how, code = ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
        print(f"\n{name}: {how} while starting; nothing was run or written.", file=sys.stderr)
        return code
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(entry())
