"""pytest asks this file about docs/: Sybil turns every page into tests.

``/// recorded`` blocks check their snippet's claims live and in every recording;
```python fences with ``>>>`` run as doctests; ``<!-- skip: next -->`` skips one.
"""

import os
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser
from tests.tree_guard import pytest_sessionfinish, pytest_sessionstart  # noqa: F401 (hooks)

from recorded.checks.sybil import LiveRuns, RecordedParser

ROOT = Path(__file__).parent
# Under pytest-xdist the workers share the cores: one thread per live run keeps two
# PyTorch runs from contending for both (each would otherwise use every core).
THREADS = 1 if os.environ.get("PYTEST_XDIST_WORKER") else None

pytest_collect_file = Sybil(
    parsers=[
        RecordedParser(
            ROOT, LiveRuns(compile_cache=ROOT / ".pytest_cache" / "compile-cache", threads=THREADS)
        ),
        PythonCodeBlockParser(),
        SkipParser(),
    ],
    path="docs",
    patterns=["*.md"],
).pytest()
