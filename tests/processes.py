"""The recorder as a real process, and whether a process is still running: for tests that
check nothing is left behind."""

import os
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def recorder(root: Path, *args: str, tmpdir: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """The real CLI in its own process (``--target cpu`` unless ``args`` name another), its
    temporary files kept under tmpdir."""
    # A suite started as a background job (`make test &`) inherits SIGINT ignored, and Python
    # keeps an ignored SIGINT ignored; the recorder must meet Ctrl-C as a terminal sends it,
    # as KeyboardInterrupt.
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from recorded.cli import main; sys.exit(main(sys.argv[2:], root=sys.argv[1]))"
    )
    target = [] if "--target" in args or "--import" in args else ["--target", "cpu"]
    full = dict(os.environ, PYTHONPATH=str(SRC), TMPDIR=str(tmpdir), **(env or {}))
    return subprocess.Popen(
        [sys.executable, "-c", code, str(root), *target, *args],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


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


def started(pidfile: Path, within: float = 60.0) -> bool:
    """Whether a snippet that writes its pid on starting has started (waiting up to
    ``within`` seconds), then a moment more for it to settle into what it does."""
    deadline = time.monotonic() + within
    while not pidfile.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    time.sleep(0.3)
    return True
