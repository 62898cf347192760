"""Whether a process is still running: for tests that check nothing is left behind."""

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed process stays a zombie until its new parent reaps it; a zombie runs nothing.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def gone_soon(pid: int, within: float = 2.0) -> bool:
    """SIGKILL is delivered asynchronously: give the kernel a moment to finish the job."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
