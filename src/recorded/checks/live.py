"""Each snippet runs live once per test session, for the page's claims (checks/sybil.py) and the
notebook's run alike: as its cell where a lesson's notebook shows it, the whole notebook run in one kernel
as a reader runs it (checks/kernel.py), else alone in a fresh interpreter, as the recorder runs it.
Shared (``LiveRuns.share``), the runs live in a folder every pytest-xdist worker sees: the first worker
that needs a run starts it under a lock, the others wait, and a page waits only for its own cells.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from ..config import targets as targets_
from ..config.targets import Target, Targets
from ..model.files import write_atomically
from ..model.recording import Ending
from ..model.snippets import DEFAULT_TIMEOUT, Snippet
from ..notebook import build as build_notebook
from ..notebook import snippet_cells, with_notebooks
from ..recorder import choose, runner, sandbox
from ..recorder.runner import RunResult
from ..recorder.sandbox import Limits


class LiveRuns:
    """Runs each snippet at most once per session and remembers the result."""

    def __init__(self, run=runner.run_snippet, compile_cache: Path | None = None, threads: int | None = None):
        self._run = run
        # A lasting torch.compile cache spares each session recompiling (recordings compile cold).
        self.compile_cache, self.threads = compile_cache, threads
        self.targets: Targets | None = None  #: the project's, set by the parser
        self.limits = Limits()  #: the project's, set by the parser
        self.results: dict[tuple[str, str], RunResult] = {}
        self.folder: Path | None = None  #: where the runs are shared with every test process
        self.root = Path()
        self._in_notebook: dict[str, str] | None = None  # each snippet a notebook shows: its lesson

    @functools.cached_property
    def target(self) -> Target:
        """The first of the project's auto targets that this machine can run: the recorder's own
        choice (choose.py), so both agree on what this machine is."""
        self.targets = self.targets or targets_.parse({}, "pyproject.toml")
        return choose.choose(self.targets, choose.AUTO, where="the tests' live runs").chosen[0]

    def share(self, folder: Path, root: Path) -> LiveRuns:
        """Share the runs of the project at ``root`` through ``folder`` with every test process."""
        if folder != self.folder:
            folder.mkdir(parents=True, exist_ok=True)
            self.folder, self.root, self._in_notebook = folder, Path(root), None
        return self

    def __call__(self, snippet: Snippet) -> RunResult:
        key = (snippet.name, snippet.sha256())
        if key not in self.results:
            self.results[key] = self._shared(snippet, self.folder) if self.folder else self.fresh(snippet)
        return self.results[key]

    def fresh(self, snippet: Snippet) -> RunResult:
        """The snippet alone, in a fresh interpreter, as the recorder runs it."""
        options = {"compile_cache": self.compile_cache, "threads": self.threads, "limits": self.limits}
        return self._run(snippet, self.target, snippet.timeout or DEFAULT_TIMEOUT, **options)

    def _shared(self, snippet: Snippet, folder: Path) -> RunResult:
        if self._in_notebook is None:
            self._in_notebook = {
                name: lesson.name
                for lesson in with_notebooks(self.root)
                for name in snippet_cells(build_notebook(self.root, lesson)[0])
            }
        if (lesson := self._in_notebook.get(snippet.name)) is not None:
            if (path := self._wait(folder / "notebook" / lesson, result_file(snippet.name))).exists():
                return load_result(path)
            why = self.notebook(lesson).get("error") or "no output"
            return RunResult(
                Ending.ERROR, None, [], [f"the notebook's run ended before this cell: {why}"], 0.0
            )
        path = folder / "fresh" / result_file(snippet.name)
        with _locked(path.with_suffix(".lock")):  # one process runs it, the others wait here
            if not path.exists():
                write_atomically(path, json.dumps(result_record(self.fresh(snippet))))
        return load_result(path)

    def notebook(self, lesson: str) -> dict:
        """The whole run of ``lesson``'s notebook (checks/kernel.py's done.json), started if need be."""
        if self.folder is None:
            raise RuntimeError("LiveRuns.share() first: a notebook runs beside the test processes")
        return json.loads(self._wait(self.folder / "notebook" / lesson).read_text(encoding="utf-8"))

    def _wait(self, where: Path, name: str = "done.json") -> Path:
        """The file ``name`` of the notebook run in ``where``, started if need be, once it or done.json is."""
        self._start(where)
        pid = int((where / "started").read_text())
        done = (where / name, where / "done.json")
        while not any(f.exists() for f in done):
            # Results looked for again after the liveness test: a run may write one and exit between.
            if not _alive(pid) and not any(f.exists() for f in done):
                log = (where / "kernel.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the notebook run (checks/kernel.py) ended without a result:\n{log}")
            time.sleep(0.1)  # then look again for what the notebook's run makes
        return where / name

    def _start(self, where: Path) -> None:
        """Start the run of lesson ``where.name``'s notebook in ``where`` unless a process did."""
        with _locked(where / "start.lock"):  # makes the folder
            if (where / "started").exists():
                return
            (tmp := where / "tmp").mkdir(exist_ok=True)
            # The kernel and its cells in the recorder's sandbox: the project read-only, this folder writable.
            env = runner.target_env(self.target, where, self.compile_cache, self.threads)
            argv = [sys.executable, "-m", "recorded.checks.kernel", str(self.root), where.name, str(where)]
            cache = [self.compile_cache] if self.compile_cache else []
            argv = sandbox.contained(argv, where, self.target.needs_device, cache)
            with (where / "kernel.log").open("wb") as log:
                process = subprocess.Popen(
                    self.limits.around(sys.executable, argv),
                    cwd=where,
                    env=env | {"TMPDIR": str(tmp), "HOME": str(tmp)},
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,
                )
            (where / "started").write_text(str(process.pid))


def result_file(snippet_name: str) -> str:
    return snippet_name.replace("/", "__") + ".json"


def result_record(result: RunResult) -> dict:
    """A run's result as JSON data, without the snippet's source (the reader has it)."""
    return asdict(result) | {"source": ""}


def load_result(path: Path) -> RunResult:
    return RunResult(**json.loads(path.read_text(encoding="utf-8")) | {"source": b""})


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        # A finished child of this process that was not reaped yet is a zombie: not alive.
        return os.waitpid(pid, os.WNOHANG)[0] == 0
    except ProcessLookupError:
        return False
    except (PermissionError, ChildProcessError):
        return True
