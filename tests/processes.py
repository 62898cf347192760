"""The recorder as a real process, and whether a process is still running: for tests that
check nothing is left behind."""

import os
import subprocess
import sys
import time
import uuid
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


def marker() -> str:
    """A word to put in a test process's command line, so the test can find it from outside
    the sandbox, where its process ids and files cannot reach (a snippet's own file name
    holding it marks the snippet too)."""
    return f"m{uuid.uuid4().hex[:16]}"


#: What a snippet or its child runs to wait until a process marked ``{mark}`` runs, as the
#: sandbox shows it its own processes.
WAIT_FOR = """
import os, time
def running(mark):
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and mark in open(f"/proc/{{entry}}/cmdline").read() and entry != str(os.getpid()):
                return True
        except OSError:
            pass
    return False
while not running({mark!r}):
    time.sleep(0.01)
"""


def running(mark: str, alone: bool = False, script: bool = False) -> list[int]:
    """The processes of this machine whose command line holds ``mark`` (zombies left out:
    a zombie runs nothing); ``alone``: only those that lead a session of their own, as a
    process that called os.setsid() does; ``script``: only a Python running the marked file
    itself (``python FILE``), not the limits' prelude or bubblewrap on the way to it, which
    a recorder killed that early would leave to start it unwatched."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            state, _, _, session = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:4]
        except (OSError, IndexError, ValueError):
            continue
        args = cmdline.split("\0")
        if script and not (len(args) > 1 and mark in args[1]):
            continue
        if mark in cmdline and state != "Z" and (not alone or session == entry):
            found.append(int(entry))
    return found


def gone_soon(mark: str, within: float = 2.0) -> bool:
    """Whether every process marked ``mark`` has ended within ``within`` seconds: SIGKILL is
    delivered asynchronously, so give the kernel a moment to finish the job."""
    deadline = time.monotonic() + within
    while running(mark):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def started(mark: str, within: float = 60.0, alone: bool = False, script: bool = False) -> bool:
    """Whether a process marked ``mark`` runs, waiting up to ``within`` seconds for one;
    ``alone`` and ``script`` as for ``running``."""
    deadline = time.monotonic() + within
    while not running(mark, alone, script):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
