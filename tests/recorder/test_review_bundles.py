"""`make import BUNDLES=...` (scripts/review_bundles.py): a reader's bundle, imported into a
clean copy of the project as untrusted input, then one line per recording saying whether the
pages' claims hold in each of its runs and what its verdicts say, then the strict build.

The bundle is made from the project's own recordings of one kind, as the reader who recorded
them would have sent it; a second one says something the pages do not.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from site_tools import copy_site

from recorded.model.store import Store
from recorded.recorder.bundles import write_bundle

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[2]
#: A CPU kind the project has recordings of, and its snippet whose verdict the pages claim.
KIND = "cpu-avx2"
TIMED = "making_it_fast/06_measure_cpu.py"


@pytest.fixture
def clean(tmp_path) -> Path:
    """A copy of the project without KIND's recordings, and a bundle of them beside it."""
    root = copy_site(ROOT, tmp_path / "project", extra=("scripts/review_bundles.py",))
    store = Store(ROOT)
    recordings = [store.load(p) for p in sorted((ROOT / "recordings" / KIND).rglob("*.json"))]
    assert recordings, f"the project has no {KIND} recordings to send"
    write_bundle(tmp_path / "sent.json", recordings)
    shutil.rmtree(root / "recordings" / KIND)
    return root


def review(root: Path, *bundles: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "review_bundles.py"), *map(str, bundles)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_sent_bundle_is_imported_and_each_recording_said_in_one_line(clean, tmp_path):
    done = review(clean, tmp_path / "sent.json")

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout.splitlines()
    recorded = sorted(
        p.relative_to(ROOT / "recordings" / KIND) for p in (ROOT / "recordings" / KIND).rglob("*.json")
    )
    assert sum(line.startswith("  imported ") for line in out) == len(recorded)
    assert sum(line.startswith("  ok ") for line in out) == len(recorded)
    timed = next(line for line in out if line.startswith(f"  ok     {TIMED} on {KIND}:"))
    assert (
        "claims of docs/measure.md hold in each of its" in timed and "bf16 vs fp32 here: slower in" in timed
    )
    assert out[-1] == "build  mkdocs build --strict passed"
    assert (
        sorted(
            p.relative_to(clean / "recordings" / KIND) for p in (clean / "recordings" / KIND).rglob("*.json")
        )
        == recorded
    )


def test_a_bundle_that_says_what_the_pages_do_not_is_named_with_the_claim_and_its_line(clean, tmp_path):
    store = Store(ROOT)
    rec = store.load(store.path(TIMED, KIND))
    rec.stdout = [line.replace("here: slower", "here: faster") for line in rec.stdout]
    write_bundle(tmp_path / "odd.json", [rec])

    done = review(clean, tmp_path / "odd.json")

    assert done.returncode == 1
    (line,) = [x for x in done.stdout.splitlines() if x.startswith(f"  fails  {TIMED} on {KIND}:")]
    assert "'bf16 vs fp32 here: slower' (docs/measure.md:" in line and "not printed in run 1 of" in line
    assert "build  mkdocs build --strict failed:" in done.stdout
