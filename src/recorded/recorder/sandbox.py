"""The sandbox every snippet runs in: bubblewrap (``bwrap``, what Flatpak uses). Standard library only.

A run sees the machine read-only (``.git`` and ``.cache`` too), writes only to its own folders, has
no network, and lives in a PID namespace that ends with it and, by ``--die-with-parent``, with the
recorder, even on SIGKILL. Only a kind with a device sees the machine's ``/dev``. ``Limits`` bound
its memory and file sizes. Where bubblewrap cannot run (missing; user namespaces restricted by
AppArmor on Ubuntu 24.04 or Docker's seccomp profile), runs are refused unless unsandboxed ones are
accepted (``--allow-unsandboxed``): these keep the limits, their folders and a supervisor that ends
every process they leave, but can write wherever the user can."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config.settings import Settings, switched_on

#: Set to 1 to run snippets without a sandbox where bubblewrap cannot run.
ALLOW_UNSANDBOXED = "RECORDED_ALLOW_UNSANDBOXED"


class SandboxUnavailable(RuntimeError):
    """Snippets cannot run sandboxed here, and unsandboxed runs were not accepted."""


@dataclass(frozen=True)
class Limits:
    """What one run may take: its writable memory (RLIMIT_DATA), any one file (RLIMIT_FSIZE)."""

    memory_bytes: int = 8 << 30
    file_bytes: int = 1 << 30

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(int(settings.memory_gib * 2**30), int(settings.file_size_mib * 2**20))

    def around(self, python: str, argv: Sequence[str]) -> list[str]:
        """``argv`` under these limits, soft and hard, so the run cannot raise them. On Linux it also
        dies with this process (PR_SET_PDEATHSIG), even before bubblewrap's --die-with-parent holds."""
        limits = [str(self.memory_bytes), str(self.file_bytes), str(os.getpid())]
        return [python, "-I", "-S", "-c", _LIMITED, *limits, *argv]


_LIMITED = """
import os, resource, sys
if sys.platform.startswith("linux"):
    import ctypes, signal
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[3]):  # the starter died before that: go with it
        sys.exit(137)
for limit, wanted in ((resource.RLIMIT_DATA, int(sys.argv[1])), (resource.RLIMIT_FSIZE, int(sys.argv[2]))):
    hard = resource.getrlimit(limit)[1]  # never above a bound the recorder was started under
    value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(limit, (value, value))
os.execvp(sys.argv[4], sys.argv[4:])
"""


def _base(bwrap: str, device: bool) -> list[str]:
    isolated = [bwrap, "--die-with-parent", "--unshare-all", "--new-session", "--ro-bind", "/", "/"]
    return [*isolated, *(["--dev-bind", "/dev", "/dev"] if device else ["--dev", "/dev"]), "--proc", "/proc"]


@functools.cache
def why_not() -> str | None:
    """Why snippets cannot run sandboxed on this machine, in one line; None when they can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt-get install bubblewrap)"
    try:
        done = subprocess.run(
            [*_base(bwrap, False), "--", "true"], check=False, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not start ({exc})"
    if done.returncode == 0:
        return None
    said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    hint = (
        "; user namespaces are restricted here (Ubuntu: sysctl kernel.apparmor_restrict_unprivileged_userns=0, "
        "or load the bwrap-userns-restrict AppArmor profile; Docker: --security-opt seccomp=unconfined)"
        if "uid map" in said or "ermission" in said or "not permitted" in said
        else ""
    )
    return f"bubblewrap cannot make a sandbox here ({said}){hint}"


def required() -> bool:
    """Whether runs go in the sandbox: yes where it works; where it does not, no if unsandboxed
    runs were accepted, else SandboxUnavailable saying why and what to do."""
    if (why := why_not()) is None:
        return True
    if switched_on(os.environ.get(ALLOW_UNSANDBOXED, "")):
        return False
    raise SandboxUnavailable(
        f"snippets run in a sandbox, and {why}. Nothing was run. Install or allow bubblewrap, or "
        f"accept unsandboxed runs, which can write wherever you can: --allow-unsandboxed "
        f"({ALLOW_UNSANDBOXED}=1 for the tests and the build)."
    )


def contained(
    argv: Sequence[str], cwd: Path, device: bool = False, writable: Sequence[Path] = ()
) -> list[str]:
    """``argv`` in the sandbox where runs go in it, else as it is: for the project's own code
    around a snippet's run (a target's check, a probe, the tests' notebook kernel)."""
    return command(argv, cwd, writable, device) if required() else list(argv)


def command(
    argv: Sequence[str],
    cwd: Path,
    writable: Sequence[Path] = (),
    device: bool = False,
    more: Sequence[str] = (),
) -> list[str]:
    """``argv`` inside the sandbox, in ``cwd``; it may write there and to ``writable``, nowhere else.
    ``more``: further bubblewrap arguments, after those binds (a read-only file inside one)."""
    bwrap = shutil.which("bwrap") or "bwrap"
    binds: list[str] = []
    for folder in dict.fromkeys([Path(cwd), *map(Path, writable)]):
        folder.mkdir(parents=True, exist_ok=True)  # bubblewrap binds only what exists
        binds += ["--bind", str(folder), str(folder)]
    return [*_base(bwrap, device), *binds, *more, "--chdir", str(cwd), "--", *argv]


# Unsandboxed on Linux, this supervisor gives the snippet what the PID namespace and
# --die-with-parent give it otherwise: SIGKILL when the recorder dies, and a subreaper that a
# process escaping by a new session or a double fork comes back to. When the snippet ends, or on
# SIGTERM (a timeout, Ctrl-C), it kills and reaps every process left below it, then ends as the
# snippet ended: a leftover would skew the next timings and hold the output pipe open.
_SUPERVISE = """
import contextlib, ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):  # the recorder died before the request took hold
    sys.exit(137)
libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
me = os.getpid()

def children():
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError), open(f"/proc/{entry}/stat", "rb") as f:
            if int(f.read().rsplit(b")", 1)[1].split()[1]) == me:  # its parent
                found.append(int(entry))
    return found

def end_all():
    for _ in range(1000):
        if not (left := children()):
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)

def stop(signum, frame):
    end_all()
    os._exit(128 + signum)

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
snippet = os.fork()
if snippet == 0:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    libc.prctl(1, signal.SIGKILL)  # the snippet dies with its supervisor
    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
_, status = os.waitpid(snippet, 0)
end_all()
if os.WIFSIGNALED(status):  # end as the snippet did, so the recorder names the signal
    if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(me, os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status))
"""


def snippet_command(
    script: Path, work: Path, writable: list[Path], device: bool, binds: list[str]
) -> list[str]:
    """A snippet's command: in the sandbox, or, unsandboxed, under the supervisor."""
    python = sys.executable
    if required():
        return command([python, str(script)], work, writable, device, binds)
    if sys.platform.startswith("linux"):
        return [python, "-c", _SUPERVISE, str(os.getpid()), str(script)]
    return [python, str(script)]  # elsewhere the process group still catches the rest
