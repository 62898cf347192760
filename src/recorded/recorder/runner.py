"""Run one snippet in a fresh interpreter and capture what it printed.

Standard library only. Each run happens in the sandbox (sandbox.py), with its own empty
working folder, temporary folder and home, a cold torch.compile cache, bounds on its
memory and file sizes, its own process group (so a timeout or Ctrl-C stops every child
it started), and bounded output capture.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..config.targets import Target
from ..model.files import WriteFailed
from ..model.snippets import Snippet
from . import sandbox
from .sandbox import Limits

#: Most bytes kept of each stream; the rest is counted and dropped.
MAX_STREAM_BYTES = 1_000_000


@dataclass
class RunResult:
    status: str  # ok, error or timeout
    exit_code: int | None
    stdout: list[str]
    stderr: list[str]
    duration_s: float
    source: bytes = b""  #: the snippet's bytes as they ran


def target_env(
    target: Target, workdir: Path, compile_cache: Path | None = None, threads: int | None = None
) -> dict[str, str]:
    """The environment a snippet runs in for a target.

    Recordings use a fresh torch.compile cache per run, so a first compiled call is timed
    cold; the tests may pass a lasting ``compile_cache`` to skip recompiling each session.
    """
    cache = compile_cache or workdir
    env = dict(os.environ)
    env.update(
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        MPLBACKEND="Agg",
        TORCHINDUCTOR_CACHE_DIR=str(cache / "torchinductor-cache"),
        TRITON_CACHE_DIR=str(cache / "triton-cache"),
    )
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    # The target's own settings last: a CPU target hides every GPU, so its tab is the CPU's.
    env.update(target.env)
    return env


class _Capture(threading.Thread):
    """Drain a pipe into a bounded buffer as the output comes (a raw read returns what is
    there), so a chatty child can never block or flood us, and a process that keeps the
    pipe open after the snippet ends cannot take the snippet's output with it."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.fd, self.kept, self.dropped = pipe.fileno(), bytearray(), 0

    def run(self):
        while chunk := _read(self.fd):
            room = MAX_STREAM_BYTES - len(self.kept)
            self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - room)

    def lines(self) -> list[str]:
        lines = bytes(self.kept).decode("utf-8", errors="replace").splitlines()
        if self.dropped:
            lines.append(f"[recorder: output cut here, {self.dropped} more bytes not kept]")
        return lines


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # closed under us: the run is over
        return b""


# Unsandboxed (sandbox.py: accepted where bubblewrap cannot run), on Linux the snippet
# starts under this supervisor, which gives it what the sandbox's PID namespace and
# --die-with-parent give it otherwise: a few lines of Python between the
# recorder and the snippet. It asks the kernel for SIGKILL when the recorder dies, however
# it dies (even SIGKILL, which leaves the recorder no chance to clean up), and to become
# the *subreaper* of everything the snippet starts: a process that escapes with a new
# session or a double fork is handed back to it, not to init. When the snippet ends, or the
# recorder asks with SIGTERM (a timeout, Ctrl-C), it kills and reaps every process left
# below it, then ends as the snippet ended. A process left running would load the machine
# and skew the next timings, and would hold the output pipe open.
_SUPERVISE = """
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):  # the recorder died before the request took hold
    sys.exit(137)
libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
me = os.getpid()

def children():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                found.append(int(entry))
    return found

def end_all():
    for _ in range(1000):
        left = children()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in left:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

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

#: How long a supervisor has to end its snippet's processes before they are killed outright.
GRACE_S = 5.0


def _command(
    python: str, script: Path, work: Path, writable: list[Path], device: bool, binds: list[str]
) -> list[str]:
    """The run's command: in the sandbox, with ``binds`` besides, or where it cannot run and
    unsandboxed runs were accepted (sandbox.required), under the supervisor."""
    if sandbox.required():
        return sandbox.command([python, str(script)], work, writable, device, binds)
    if sys.platform.startswith("linux"):
        return [python, "-c", _SUPERVISE, str(os.getpid()), str(script)]
    return [python, str(script)]  # elsewhere the process group still catches the rest


def _stop(proc: subprocess.Popen) -> None:
    """End the run: the supervisor ends every process below it; then its group is killed
    outright, in case it could not."""
    if proc.poll() is None:
        try:
            proc.terminate()
            proc.wait(GRACE_S)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


#: A run's folders are named for the recorder that made them, so that a later one can
#: remove those of a recorder that died without removing them (killed with SIGKILL).
_FOLDER = re.compile(r"record-runs-(\d+)-")


def folder(kind: str) -> tempfile.TemporaryDirectory:
    """A temporary folder for one run, check or probe, removed after it, however it ended;
    first, once per process, the folders a dead recorder left are removed."""
    _sweep()
    return tempfile.TemporaryDirectory(
        prefix=f"record-runs-{os.getpid()}-{kind}-", ignore_cleanup_errors=True
    )


@functools.cache
def _sweep() -> None:
    for entry in Path(tempfile.gettempdir()).glob("record-runs-*"):
        found = _FOLDER.match(entry.name)
        if not found or not entry.is_dir() or entry.is_symlink():
            continue
        try:
            os.kill(int(found[1]), 0)
        except ProcessLookupError:  # its recorder is gone
            shutil.rmtree(entry, ignore_errors=True)
        except (PermissionError, OverflowError):
            pass


# torch.compile's C++ code for a CPU includes one large header, which Inductor precompiles
# into the temporary folder (``$TMPDIR/torchinductor_<user>/precompiled_headers``, about 150 MB
# and 7 s): a machine does it once, at its first compilation. Each run has a temporary folder
# of its own, so without this every run would pay it again, and "the first compiled call" would
# time torch's toolchain rather than the model. It is built once per recorder, by this code of
# the recorder's own, and each run sees it read-only: no snippet can change it for another.
_WARM_UP = "import torch\nf = torch.compile(lambda x: torch.tanh(x) * 2 + 1)\nf(torch.ones(8))\n"


_KEPT: list[tempfile.TemporaryDirectory] = []


@functools.cache
def _precompiled(python: str) -> tuple[str, tuple[Path, ...]] | None:
    """(the folder's name under TMPDIR, the header files) once this process has built them;
    None where it cannot (no sandbox, no torch, no compiler): runs then build their own."""
    if not sandbox.required():
        return None
    kept = folder("toolchain")  # removed when this process exits (or by the next one's sweep)
    _KEPT.append(kept)
    top = Path(kept.name)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TMPDIR=str(top), HOME=str(top))
    env["TORCHINDUCTOR_CACHE_DIR"] = str(top / "inductor")
    try:
        subprocess.run(
            sandbox.contained([python, "-c", _WARM_UP], top),
            cwd=top,
            env=env,
            capture_output=True,
            timeout=300,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    headers = tuple(sorted(top.glob("torchinductor_*/precompiled_headers/*.h*")))
    return (headers[0].parent.parent.name, headers) if headers else None


def _toolchain(python: str, source: bytes, tmp: Path) -> list[str]:
    """The sandbox's read-only binds of the precompiled header into a run's temporary folder,
    for a snippet that compiles with torch.compile; none for any other."""
    if b"torch.compile" not in source or (built := _precompiled(python)) is None:
        return []
    name, headers = built
    into = tmp / name / "precompiled_headers"
    into.mkdir(parents=True)
    return [arg for h in headers for arg in ("--ro-bind", str(h), str(into / h.name))]


def run_snippet(
    snippet: Snippet,
    target: Target,
    timeout: float,
    python: str = sys.executable,
    compile_cache: Path | None = None,
    threads: int | None = None,
    limits: Limits | None = None,
) -> RunResult:
    """Run the snippet once, as a copy in a fresh temporary folder: the code that ran is the
    code the result names (``RunResult.source``), and it cannot find the project's files
    through its own path. SandboxUnavailable when it cannot be contained and unsandboxed
    runs were not accepted; WriteFailed when its copy cannot be written."""
    with folder("run") as top:
        workdir, tmp, code_dir = Path(top, "work"), Path(top, "tmp"), Path(top, "code")
        for made in (workdir, tmp, code_dir):
            made.mkdir()
        source = snippet.path.read_bytes()
        copy = code_dir / snippet.path.name
        try:
            copy.write_bytes(source)
        except OSError as exc:
            raise WriteFailed(
                f"{copy}: the run's copy of {snippet.name} could not be written ({exc.strerror or exc}); "
                "nothing was run, and no recording changed."
            ) from None
        writable = [tmp] + ([compile_cache] if compile_cache else [])
        contained = sandbox.required()
        binds = _toolchain(python, source, tmp) if contained else []
        argv = (limits or Limits()).around(
            python, _command(python, copy, workdir, writable, target.needs_device, binds)
        )
        env = target_env(target, workdir, compile_cache, threads) | {
            "TMPDIR": str(tmp),
            "HOME": str(tmp),
            "XDG_CACHE_HOME": str(tmp / ".cache"),
        }
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: one signal reaches every child
        )
        out, err = _Capture(proc.stdout), _Capture(proc.stderr)
        out.start()
        err.start()
        status = "ok"
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            status = "timeout"
        finally:
            # Also on success and on Ctrl-C: no process of the snippet outlives its run.
            _stop(proc)
            # Whatever still holds the pipes open must not keep us here: what came is kept.
            out.join(GRACE_S)
            err.join(GRACE_S)
        duration = time.perf_counter() - start
    code = proc.returncode
    if contained and code is not None and 128 < code <= 128 + 64:
        code = 128 - code  # bubblewrap reports a signal as 128 + its number, as shells do
    stderr = err.lines()
    if status == "timeout":
        code = None
        stderr.append(f"[recorder: stopped after the {timeout:g} s timeout]")
    elif code != 0:
        status = "error"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            stderr.append(f"[recorder: killed by signal {name}]")
    return RunResult(status, code, out.lines(), stderr, round(duration, 3), source)


class TargetCheckFailed(RuntimeError):
    """This machine cannot record a target: what it lacks, or what its check printed."""


def _printed(target: Target, python: str) -> tuple[str, subprocess.CompletedProcess]:
    """The last line ``target``'s check prints in ``target``'s environment, and the run."""
    assert target.check is not None
    with folder("check") as tmp:
        try:
            done = subprocess.run(
                sandbox.contained([python, "-c", target.check.code], Path(tmp), target.needs_device),
                cwd=tmp,
                env=target_env(target, Path(tmp)),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TargetCheckFailed(f"its check could not run ({exc})") from None
    return (done.stdout.strip().splitlines() or [""])[-1].strip(), done


@functools.cache
def check(target: Target, python: str = sys.executable) -> str | None:
    """Prove this machine is what ``target`` claims, before anything is recorded on it.

    Returns what the target's check printed (None when it has no check); raises
    TargetCheckFailed saying why not. Starts Python only for a target with a check, once
    per target and interpreter. An emulated target's check also runs in its host's
    environment, where it must print something else: a check that prints the same with
    and without the limits cannot tell whether they took effect.
    """
    if target.detect and not target.detected():  # nothing to detect: the check alone proves it
        raise TargetCheckFailed(f"none of {', '.join(target.detect)} is on this machine")
    if target.check is None:
        return None
    printed, done = _printed(target, python)
    if done.returncode != 0 or printed != target.check.prints:
        why = (done.stderr.strip().splitlines() or [""])[-1] if done.returncode else ""
        raise TargetCheckFailed(
            f"its check printed {printed!r}, not {target.check.prints!r}"
            + (f" (exit code {done.returncode}: {why})" if done.returncode else "")
            + f"; the check, run with {dict(target.env)}: {target.check.code}"
        )
    if target.host is not None:
        unlimited, _ = _printed(dataclasses.replace(target, env=target.host_env), python)
        if unlimited == printed:
            raise TargetCheckFailed(
                f"its check prints {printed!r} in its host {target.host}'s environment too "
                f"({dict(target.host_env)}), so it cannot tell {target.name} from {target.host}; "
                f"make the check print what the limits in its env change: {target.check.code}"
            )
    return printed
