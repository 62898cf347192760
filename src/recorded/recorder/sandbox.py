"""The sandbox every snippet runs in: bubblewrap (``bwrap``, what Flatpak uses).

Standard library only. A run sees the whole machine read-only (the project, its ``.git``
and ``.cache`` included), writes only to its own working folder and its own temporary folder
(``TMPDIR``; both removed after the run), has no network (a new network namespace holds only loopback), and lives in
a new PID namespace: when the snippet ends every process it started ends with it, and when
the recorder dies, even by SIGKILL, bubblewrap's ``--die-with-parent`` ends the sandbox.
A CPU kind sees a minimal ``/dev``; a kind with a device sees the machine's, so the GPU
works. Around the sandbox, resource limits bound the memory a run may take and the size of
any file it writes (``Limits``, ``[tool.recorded] memory-gib`` and ``file-size-mib``).

Where bubblewrap cannot run (not installed; user namespaces off, as AppArmor on Ubuntu 24.04
has them unless its ``bwrap-userns-restrict`` profile is loaded or
``kernel.apparmor_restrict_unprivileged_userns=0``; Docker's default seccomp profile), the
probe says why in one line, and a run is refused unless unsandboxed runs are accepted:
``--allow-unsandboxed``, or ``RECORDED_ALLOW_UNSANDBOXED=1`` for the tests and the build.
An unsandboxed run still gets the limits, its own folders and a supervisor that ends every
process it leaves (runner.py), but it can write wherever its user can.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config.settings import Settings

#: Set to 1 to run snippets without a sandbox where bubblewrap cannot run.
ALLOW_UNSANDBOXED = "RECORDED_ALLOW_UNSANDBOXED"


class SandboxUnavailable(RuntimeError):
    """Snippets cannot run sandboxed here, and unsandboxed runs were not accepted."""


@dataclass(frozen=True)
class Limits:
    """What one run may take: memory (its private writable memory, RLIMIT_DATA) and the size
    of any one file it writes (RLIMIT_FSIZE)."""

    memory_bytes: int = 8 << 30
    file_bytes: int = 1 << 30

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        """The limits a project sets (``[tool.recorded] memory-gib``, ``file-size-mib``)."""
        return cls(int(settings.memory_gib * 2**30), int(settings.file_size_mib * 2**20))

    def around(self, python: str, argv: Sequence[str]) -> list[str]:
        """``argv`` started under these limits, soft and hard, so the run cannot raise them:
        a few lines of Python that set them and become ``argv`` (``exec``). On Linux they
        also tie its life to this process's (PR_SET_PDEATHSIG, kept across the exec), so a
        recorder killed before bubblewrap's own --die-with-parent takes hold leaves nothing."""
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
    return [
        bwrap,
        "--die-with-parent",
        "--unshare-all",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        *(["--dev-bind", "/dev", "/dev"] if device else ["--dev", "/dev"]),
        "--proc",
        "/proc",
    ]


@functools.cache
def why_not() -> str | None:
    """Why snippets cannot run sandboxed on this machine, in one line; None when they can.
    Asked once per process: it starts bubblewrap once."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt-get install bubblewrap)"
    try:
        done = subprocess.run(
            [*_base(bwrap, False), "--", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
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


def allowed_unsandboxed() -> bool:
    return os.environ.get(ALLOW_UNSANDBOXED, "").strip().lower() in ("1", "true", "yes", "on")


def required() -> bool:
    """Whether runs go in the sandbox: yes where it works; where it does not, no if unsandboxed
    runs were accepted, else SandboxUnavailable saying why and what to do."""
    why = why_not()
    if why is None:
        return True
    if allowed_unsandboxed():
        return False
    raise SandboxUnavailable(
        f"snippets run in a sandbox, and {why}. Nothing was run. Install or allow bubblewrap, or "
        f"accept unsandboxed runs, which can write wherever you can: --allow-unsandboxed "
        f"({ALLOW_UNSANDBOXED}=1 for the tests and the build)."
    )


def contained(
    argv: Sequence[str], cwd: Path, device: bool = False, writable: Sequence[Path] = ()
) -> list[str]:
    """``argv`` in the sandbox where runs go in it (``required``), else as it is: for the
    project's own code around a snippet's run (a target's check, a probe, the tests'
    notebook kernel)."""
    return command(argv, cwd, writable, device) if required() else list(argv)


def command(
    argv: Sequence[str],
    cwd: Path,
    writable: Sequence[Path] = (),
    device: bool = False,
    more: Sequence[str] = (),
) -> list[str]:
    """``argv`` inside the sandbox, starting in ``cwd``, which it may write to, as to each
    folder of ``writable`` (its temporary folder, say); every other path is read-only.
    ``more``: further bubblewrap arguments, after those binds (a read-only file inside one)."""
    bwrap = shutil.which("bwrap") or "bwrap"
    binds: list[str] = []
    for folder in dict.fromkeys([Path(cwd), *map(Path, writable)]):
        folder.mkdir(parents=True, exist_ok=True)  # bubblewrap binds only what exists
        binds += ["--bind", str(folder), str(folder)]
    return [*_base(bwrap, device), *binds, *more, "--chdir", str(cwd), "--", *argv]
