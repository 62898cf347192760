"""Run a lesson's notebook top to bottom in one Jupyter kernel, as a reader would (checks/live.py starts
it: ``python -m recorded.checks.kernel ROOT LESSON FOLDER``). Each snippet cell's result, as it finishes,
becomes FOLDER/<snippet>.json, that snippet's live run; the whole run FOLDER/done.json, with the run's
error if it stopped. A cell that raises does not stop the run: the cells after it still run.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

from nbclient import NotebookClient

from ..config import lessons
from ..model.files import write_atomically
from ..model.recording import Ending
from ..model.snippets import DEFAULT_TIMEOUT, load
from ..model.store import Store
from ..notebook import build, snippet_cells
from ..recorder.runner import RunResult
from .live import result_file, result_record

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cell_result(cell, seconds: float) -> RunResult:
    """What a code cell printed, as a run's result: an error output makes it a failed run."""
    printed = {"stdout": "", "stderr": ""}
    error: list[str] = []
    for output in cell.outputs:
        if output.output_type == "stream":
            printed[output.name] += output.text  # a stream is named stdout or stderr
        elif output.output_type == "error":
            error = [_ANSI.sub("", line) for frame in output.traceback for line in frame.split("\n")]
    stdout, stderr = printed["stdout"].splitlines(), printed["stderr"].splitlines() + error
    return RunResult(Ending.ERROR if error else Ending.OK, 1 if error else 0, stdout, stderr, seconds)


def main(argv: list[str]) -> None:
    root, name, folder = Path(argv[0]), argv[1], Path(argv[2])
    done: dict = {"cells": {}, "error": None}
    try:
        nb, _ = build(root, lessons.load(root)[name])
        cells = {index: snippet for snippet, index in snippet_cells(nb).items()}
        store = Store(root)
        timeout = max(
            (load(store.snippets_dir, s, store.targets).timeout or DEFAULT_TIMEOUT for s in cells.values()),
            default=DEFAULT_TIMEOUT,
        )
        started: dict[int, float] = {}

        def on_start(cell, cell_index) -> None:
            started[cell_index] = time.monotonic()

        def on_executed(cell, cell_index, **_) -> None:
            if cell_index in cells:
                seconds = time.monotonic() - started.get(cell_index, time.monotonic())
                record = result_record(cell_result(cell, seconds))
                write_atomically(folder / result_file(cells[cell_index]), json.dumps(record))
                done["cells"][cells[cell_index]] = record

        with tempfile.TemporaryDirectory(prefix=f"{name}-notebook-") as workdir:
            NotebookClient(
                nb,
                timeout=timeout,
                kernel_name="python3",
                allow_errors=True,
                resources={"metadata": {"path": workdir}},
                on_cell_start=on_start,
                on_cell_executed=on_executed,
            ).execute()
    except Exception as exc:  # noqa: BLE001 (whatever stopped the run is its result)
        done["error"] = f"{type(exc).__name__}: {exc}"
    write_atomically(folder / "done.json", json.dumps(done))


if __name__ == "__main__":
    main(sys.argv[1:])
