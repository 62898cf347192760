"""Run one snippet in a fresh interpreter, in the sandbox (sandbox.py), and capture what it printed.

Standard library only. Each run gets its own empty folders, a cold torch.compile cache, the
sandbox's limits and its own process group (a timeout or Ctrl-C stops every child)."""

from __future__ import annotations

import contextlib
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
from ..model.recording import Ending
from ..model.snippets import Snippet
from . import sandbox
from .sandbox import Limits

#: Most bytes kept of each stream; the rest is counted and dropped.
MAX_STREAM_BYTES = 1_000_000
#: How long a supervisor has to end its snippet's processes before they are killed outright.
GRACE_S = 5.0


@dataclass
class RunResult:
    status: Ending
    exit_code: int | None
    stdout: list[str]
    stderr: list[str]
    duration_s: float
    source: bytes = b""  #: the snippet's bytes as they ran

    def __post_init__(self) -> None:
        self.status = Ending(self.status)  # as read back from JSON


def target_env(
    target: Target, workdir: Path, compile_cache: Path | None = None, threads: int | None = None
) -> dict[str, str]:
    """The environment a snippet runs in for a target. Recordings compile cold, in a fresh cache
    per run; the tests may pass a lasting ``compile_cache`` to skip recompiling each session."""
    cache = compile_cache or workdir
    env = dict(
        os.environ,
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
    """Drain a pipe into a bounded buffer as the output comes, so a chatty child can never block
    or flood us, and a process that keeps the pipe open cannot take the snippet's output with it."""

    def __init__(self, pipe):
        super().__init__(daemon=True)
        self.fd, self.kept, self.dropped = pipe.fileno(), bytearray(), 0
        self.start()

    def run(self):
        with contextlib.suppress(OSError):  # closed under us: the run is over
            while chunk := os.read(self.fd, 65536):
                room = MAX_STREAM_BYTES - len(self.kept)
                self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - room)

    def lines(self) -> list[str]:
        lines = bytes(self.kept).decode("utf-8", errors="replace").splitlines()
        if self.dropped:
            lines.append(f"[recorder: output cut here, {self.dropped} more bytes not kept]")
        return lines


#: A run's folders are named for the recorder that made them, so that a later one can remove
#: those of a recorder that died without removing them (killed with SIGKILL).
_FOLDER = re.compile(r"record-runs-(\d+)-")


def folder(kind: str) -> tempfile.TemporaryDirectory:
    """A temporary folder for one run, check or probe, removed after it, however it ended."""
    _sweep()
    prefix = f"record-runs-{os.getpid()}-{kind}-"
    return tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True)


@functools.cache
def _sweep() -> None:
    """Once per process: remove the folders of recorders that are gone."""
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


def run_code(code: str, cwd: Path, env: dict[str, str], device: bool = False) -> subprocess.CompletedProcess:
    """Run the project's own ``code`` (a check, a probe) in ``cwd``, contained as a snippet is."""
    return subprocess.run(
        sandbox.contained([sys.executable, "-c", code], cwd, device),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        errors="replace",
        timeout=300,
        check=False,
    )


# torch.compile's C++ code for a CPU includes one large header that Inductor precompiles into the
# temporary folder (150 MB, 7 s). Each run has its own, so every run would pay it and "the first
# compiled call" would time torch's toolchain: it is built once here, and each run sees it read-only.
_WARM_UP = "import torch\nf = torch.compile(lambda x: torch.tanh(x) * 2 + 1)\nf(torch.ones(8))\n"
_KEPT: list[tempfile.TemporaryDirectory] = []


@functools.cache
def _precompiled() -> tuple[str, tuple[Path, ...]] | None:
    """(the folder's name under TMPDIR, the header files) once built; None where it cannot be
    (no sandbox, no torch, no compiler): runs then build their own."""
    if not sandbox.required():
        return None
    kept = folder("toolchain")  # removed when this process exits (or by the next one's sweep)
    _KEPT.append(kept)
    top = Path(kept.name)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TMPDIR=str(top), HOME=str(top))
    env["TORCHINDUCTOR_CACHE_DIR"] = str(top / "inductor")
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        if run_code(_WARM_UP, top, env).returncode == 0:
            headers = tuple(sorted(top.glob("torchinductor_*/precompiled_headers/*.h*")))
            return (headers[0].parent.parent.name, headers) if headers else None
    return None


def _toolchain(source: bytes, tmp: Path) -> list[str]:
    """Read-only binds of the precompiled header into a run's temporary folder, if it uses torch.compile."""
    if b"torch.compile" not in source or (built := _precompiled()) is None:
        return []
    name, headers = built
    into = tmp / name / "precompiled_headers"
    into.mkdir(parents=True)
    return [arg for h in headers for arg in ("--ro-bind", str(h), str(into / h.name))]


def run_snippet(
    snippet: Snippet,
    target: Target,
    timeout: float,
    compile_cache: Path | None = None,
    threads: int | None = None,
    limits: Limits | None = None,
) -> RunResult:
    """Run a copy of the snippet once in a fresh folder: the code that ran is ``RunResult.source``,
    and it cannot find the project through its own path. SandboxUnavailable, or WriteFailed."""
    with folder("run") as top:
        workdir, tmp, code_dir = (Path(top, name) for name in ("work", "tmp", "code"))
        for made in (workdir, tmp, code_dir):
            made.mkdir()
        source = snippet.path.read_bytes()
        copy = code_dir / snippet.path.name
        try:
            copy.write_bytes(source)
        except OSError as exc:
            why = f"the run's copy of {snippet.name} could not be written ({exc.strerror or exc})"
            raise WriteFailed(f"{copy}: {why}; nothing was run, and no recording changed.") from None
        writable = [tmp] + ([compile_cache] if compile_cache else [])
        contained = sandbox.required()
        binds = _toolchain(source, tmp) if contained else []
        command = sandbox.snippet_command(copy, workdir, writable, target.needs_device, binds)
        argv = (limits or Limits()).around(sys.executable, command)
        env = target_env(target, workdir, compile_cache, threads)
        env |= {"TMPDIR": str(tmp), "HOME": str(tmp), "XDG_CACHE_HOME": str(tmp / ".cache")}
        timed_out, code, out, err, duration = _watch(argv, workdir, env, timeout)
    if contained and code is not None and 128 < code <= 128 + 64:
        code = 128 - code  # bubblewrap reports a signal as 128 + its number, as shells do
    stderr, status = err.lines(), Ending.OK if code == 0 else Ending.ERROR
    if timed_out:
        status, code = Ending.TIMEOUT, None
        stderr.append(f"[recorder: stopped after the {timeout:g} s timeout]")
    elif code < 0:
        name = next((sig.name for sig in signal.Signals if sig == -code), str(-code))
        stderr.append(f"[recorder: killed by signal {name}]")
    return RunResult(status, code, out.lines(), stderr, round(duration, 3), source)


def _watch(argv: list[str], cwd: Path, env: dict[str, str], timeout: float):
    """Run ``argv`` until it ends or times out: (timed out, exit code, stdout, stderr, seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: one signal reaches every child
    )
    out, err = _Capture(proc.stdout), _Capture(proc.stderr)
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # Also on success and on Ctrl-C, so no process of the snippet outlives its run: the
        # supervisor ends every process below it; then its group is killed, in case it could not.
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, subprocess.TimeoutExpired):
                proc.terminate()
                proc.wait(GRACE_S)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        # Whatever still holds the pipes open must not keep us here: what came is kept.
        out.join(GRACE_S)
        err.join(GRACE_S)
    return timed_out, proc.returncode, out, err, time.perf_counter() - start


class TargetCheckFailed(RuntimeError):
    """This machine cannot record a target: what it lacks, or what its check printed."""


def _printed(target: Target, code: str) -> tuple[str, subprocess.CompletedProcess]:
    """The last line ``code`` (a check) prints in ``target``'s environment, and the run."""
    with folder("check") as tmp:
        try:
            done = run_code(code, Path(tmp), target_env(target, Path(tmp)), target.needs_device)
        except (OSError, subprocess.SubprocessError) as exc:
            raise TargetCheckFailed(f"its check could not run ({exc})") from None
    return last_line(done.stdout), done


def last_line(text: str) -> str:
    """The last line a probe or check printed: its answer, or the error that ended it."""
    return (text.strip().splitlines() or [""])[-1].strip()


@functools.cache
def check(target: Target) -> str | None:
    """Prove this machine is what ``target`` claims, before anything is recorded on it: what its check
    printed (None without a check), or TargetCheckFailed saying why not. An emulated target's check must
    print something else in its host's environment, or it cannot tell whether the limits took effect."""
    if target.detect and not target.detected():  # nothing to detect: the check alone proves it
        raise TargetCheckFailed(f"none of {', '.join(target.detect)} is on this machine")
    if target.check is None:
        return None
    printed, done = _printed(target, target.check.code)
    if done.returncode != 0 or printed != target.check.prints:
        raise TargetCheckFailed(
            f"its check printed {printed!r}, not {target.check.prints!r}"
            + (f" (exit code {done.returncode}: {last_line(done.stderr)})" if done.returncode else "")
            + f"; the check, run with {dict(target.env)}: {target.check.code}"
        )
    if target.host is not None:
        unlimited, _ = _printed(dataclasses.replace(target, env=target.host_env), target.check.code)
        if unlimited == printed:
            raise TargetCheckFailed(
                f"its check prints {printed!r} in its host {target.host}'s environment too "
                f"({dict(target.host_env)}), so it cannot tell {target.name} from {target.host}; "
                f"make the check print what the limits in its env change: {target.check.code}"
            )
    return printed
