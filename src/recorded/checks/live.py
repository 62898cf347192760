"""Each snippet runs live once per test session; the page's claims (checks/sybil.py) and the
notebook's run share it. A snippet a lesson's notebook shows runs as its cell, the whole notebook in
one kernel top to bottom as a reader runs it (checks/kernel.py); any other runs alone in a fresh
interpreter, as the recorder runs it.

Shared (``LiveRuns.share``), the runs live in a folder every pytest-xdist worker sees; a lock lets the
first worker that needs a run start it while the others wait. The notebook runs in a process beside
the workers and writes each cell's result as it finishes, so a page waits only for its own cells.
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
from ..recorder.sandbox import Limits

POLL = 0.1  #: seconds between looks for a result another process is making


class LiveRuns:
    """Runs each snippet at most once per session and remembers the result."""

    def __init__(self, run=runner.run_snippet, compile_cache: Path | None = None, threads: int | None = None):
        self._run = run
        self.targets: Targets | None = None  # the project's, set by the parser
        # A lasting torch.compile cache spares each test session the recompilation; the
        # recordings, which report compile times, are always made with a cold one.
        self.compile_cache = compile_cache
        self.threads = threads
        self.results: dict[tuple[str, str], runner.RunResult] = {}
        self.count: dict[str, int] = {}
        self._target: Target | None = None
        self.limits = Limits()  #: the project's, set by the parser
        self._shared: _Shared | None = None

    @property
    def target(self) -> Target:
        """The first of the project's auto targets that this machine can run. Decided once."""
        if self._target is None:
            self.targets = self.targets or targets_.parse({}, "pyproject.toml")
            # The recorder's own choice (choose.py), so both agree on what this machine is.
            chosen = choose.choose(self.targets, choose.AUTO, where="the tests' live runs")
            self._target = chosen.chosen[0]
        return self._target

    def share(self, folder: Path, root: Path) -> LiveRuns:
        """Share the runs of the project at ``root`` through ``folder`` with every test process."""
        if self._shared is None or self._shared.folder != folder:
            self._shared = _Shared(folder, Path(root), self)
        return self

    def __call__(self, snippet: Snippet) -> runner.RunResult:
        key = (snippet.name, snippet.sha256())
        if key not in self.results:
            self.count[snippet.name] = self.count.get(snippet.name, 0) + 1
            self.results[key] = self._shared.result(snippet) if self._shared else self.fresh(snippet)
        return self.results[key]

    def fresh(self, snippet: Snippet) -> runner.RunResult:
        """The snippet alone, in a fresh interpreter, as the recorder runs it."""
        options = {"compile_cache": self.compile_cache, "threads": self.threads, "limits": self.limits}
        return self._run(snippet, self.target, snippet.timeout or DEFAULT_TIMEOUT, **options)

    def notebook(self, lesson: str) -> dict:
        """The whole run of ``lesson``'s notebook (checks/kernel.py's done.json), started if need be."""
        if self._shared is None:
            raise RuntimeError("LiveRuns.share() first: a notebook runs beside the test processes")
        return self._shared.notebook_done(lesson)


class _Shared:
    """The session's runs, in ``folder``, seen by every test process."""

    def __init__(self, folder: Path, root: Path, live: LiveRuns):
        self.folder, self.root, self.live = folder, root, live
        self.folder.mkdir(parents=True, exist_ok=True)

    @functools.cached_property
    def in_notebook(self) -> dict[str, str]:
        """Each snippet a lesson's notebook shows, and that lesson's name."""
        return {
            name: lesson.name
            for lesson in with_notebooks(self.root)
            for name in snippet_cells(build_notebook(self.root, lesson)[0])
        }

    def result(self, snippet: Snippet) -> runner.RunResult:
        if (lesson := self.in_notebook.get(snippet.name)) is not None:
            return self._from_notebook(lesson, snippet)
        path = self.folder / "fresh" / result_file(snippet.name)
        with _locked(path.with_suffix(".lock")):  # one process runs it, the others wait here
            if not path.exists():
                write_atomically(path, json.dumps(result_record(self.live.fresh(snippet))))
        return load_result(path)

    def _start(self, lesson: str) -> Path:
        """The lesson's notebook run folder; the run started by the first process to ask."""
        where = self.folder / "notebook" / lesson
        with _locked(where / "start.lock"):  # makes the folder
            if not (where / "started").exists():
                target = self.live.target
                tmp = where / "tmp"
                tmp.mkdir(exist_ok=True)
                # The kernel, and every cell it runs, in the sandbox the recorder's runs get:
                # its folder and temporary folder writable, the project read-only.
                env = runner.target_env(target, where, self.live.compile_cache, self.live.threads)
                cache = [self.live.compile_cache] if self.live.compile_cache else []
                argv = [sys.executable, "-m", "recorded.checks.kernel", str(self.root), lesson, str(where)]
                argv = sandbox.contained(argv, where, target.needs_device, cache)
                with (where / "kernel.log").open("wb") as log:
                    process = subprocess.Popen(
                        self.live.limits.around(sys.executable, argv),
                        cwd=where,
                        env=env | {"TMPDIR": str(tmp), "HOME": str(tmp)},
                        stdout=subprocess.DEVNULL,
                        stderr=log,
                        start_new_session=True,
                    )
                (where / "started").write_text(str(process.pid))
        return where

    def _wait(self, lesson: str, name: str = "done.json") -> Path:
        """The file ``name`` of the lesson's notebook run (started if need be), once it or done.json is."""
        where = self._start(lesson)
        pid = int((where / "started").read_text())
        while not (where / name).exists() and not (where / "done.json").exists():
            if not (where / "done.json").exists() and not _alive(pid):
                log = (where / "kernel.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the notebook run (checks/kernel.py) ended without a result:\n{log}")
            time.sleep(POLL)
        return where / name

    def _from_notebook(self, lesson: str, snippet: Snippet) -> runner.RunResult:
        if (path := self._wait(lesson, result_file(snippet.name))).exists():
            return load_result(path)
        done = self.notebook_done(lesson)
        why = f"the notebook's run ended before this cell: {done.get('error') or 'no output'}"
        return runner.RunResult(Ending.ERROR, None, [], [why], 0.0)

    def notebook_done(self, lesson: str) -> dict:
        return json.loads(self._wait(lesson).read_text(encoding="utf-8"))


def result_file(snippet_name: str) -> str:
    return snippet_name.replace("/", "__") + ".json"


def result_record(result: runner.RunResult) -> dict:
    """A run's result as JSON data, without the snippet's source (the reader has it)."""
    return asdict(result) | {"source": ""}


def load_result(path: Path) -> runner.RunResult:
    return runner.RunResult(**json.loads(path.read_text(encoding="utf-8")) | {"source": b""})


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A finished child of this process that was not reaped yet is a zombie: not alive.
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    return True
