"""pytest asks this file about docs/: Sybil turns every page into tests.

``/// recorded`` blocks check their snippet's claims live and in every recording;
```python fences with ``>>>`` run as doctests; ``<!-- skip: next -->`` skips one.
"""

import os
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser
from tests.tree_guard import pytest_sessionfinish, pytest_sessionstart  # noqa: F401 (hooks)

from recorded.checks.sybil import LiveRuns, RecordedParser

ROOT = Path(__file__).parent
# Under pytest-xdist the workers share the cores: one thread per live run keeps two
# PyTorch runs from contending for both (each would otherwise use every core).
THREADS = 1 if os.environ.get("PYTEST_XDIST_WORKER") else None

LIVE = LiveRuns(compile_cache=ROOT / ".pytest_cache" / "compile-cache", threads=THREADS)


@pytest.fixture(scope="session")
def live_runs(tmp_path_factory) -> LiveRuns:
    """This session's live runs, shared by its workers: each snippet runs once, as its cell in
    the lesson's notebook run top to bottom (recorded/checks/live.py)."""
    base = tmp_path_factory.getbasetemp()
    session = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' shared folder
    return LIVE.share(session / "live-runs", ROOT)


pytest_collect_file = Sybil(
    parsers=[RecordedParser(ROOT, LIVE), PythonCodeBlockParser(), SkipParser()],
    path="docs",
    patterns=["*.md"],
    fixtures=["live_runs"],
).pytest()
