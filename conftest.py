"""pytest asks this file about docs/: Sybil turns every page into tests.

``/// recorded`` blocks check their snippet's claims live and in every recording;
```python fences with ``>>>`` run as doctests; ``<!-- skip: next -->`` skips one.
"""

from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

from recorded.sybil_parser import LiveRuns, RecordedParser

ROOT = Path(__file__).parent

pytest_collect_file = Sybil(
    parsers=[
        RecordedParser(ROOT, LiveRuns(compile_cache=ROOT / ".pytest_cache" / "compile-cache")),
        PythonCodeBlockParser(),
        SkipParser(),
    ],
    path="docs",
    patterns=["*.md"],
).pytest()
