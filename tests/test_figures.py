"""The figures are drawn from the recordings: a re-recording must be followed by a redraw."""

from pathlib import Path

import pytest

from recorded.figures import FIGURES, out_of_date, path
from recorded.store import Store

ROOT = Path(__file__).resolve().parents[1]
FIGURES_DIR = ROOT / "docs" / "figures"


def test_figures_match_the_recordings():
    stale = out_of_date(Store(ROOT), FIGURES_DIR)
    assert not stale, (
        f"figures drawn from other data than the recordings now hold: {stale}; "
        "run `python scripts/make_figures.py` and commit docs/figures/."
    )


@pytest.mark.parametrize("fig", FIGURES, ids=lambda f: f.name)
def test_every_figure_is_shown_with_alt_text(fig):
    file = path(FIGURES_DIR, fig).relative_to(ROOT / "docs").as_posix()
    pages = [p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")]
    uses = [line for text in pages for line in text.splitlines() if f"]({file})" in line]
    assert uses, f"no page shows {file}"
    for line in uses:
        alt = line.strip().removeprefix("![").split("](")[0]
        assert len(alt) > 40, f"{file} needs alt text that describes the picture, got {alt!r}"


def test_a_changed_recording_makes_its_figure_out_of_date(tmp_path):
    # Copy the project's inputs, change one recorded number, and expect that figure flagged.
    import shutil

    for part in ("snippets", "recordings"):
        shutil.copytree(ROOT / part, tmp_path / part)
    shutil.copytree(FIGURES_DIR, tmp_path / "figures")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)  # the targets
    store = Store(tmp_path)
    rec = store.read("making_it_fast/06_measure_cpu.py", "cpu")
    rec.stdout = [line.replace(" ms per batch", "1 ms per batch", 1) if line.startswith("float32:") else line
                  for line in rec.stdout]
    store.write(rec)
    assert out_of_date(store, tmp_path / "figures") == ["bf16-vs-fp32"]
