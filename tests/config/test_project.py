"""Whole-project rules: every snippet used, every block and recording pointing somewhere real."""

import subprocess
from pathlib import Path

import pytest

from recorded.model.snippets import discover
from recorded.model.store import Store
from recorded.pages import blocks

ROOT = Path(__file__).resolve().parents[2]
STORE = Store(ROOT)


def cited() -> dict[str, list[str]]:
    """snippet name -> the page:line places that show it."""
    found: dict[str, list[str]] = {}
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for line, argument in blocks.headers(page.read_text(encoding="utf-8").splitlines()):
            found.setdefault(argument, []).append(f"{page.relative_to(ROOT)}:{line}")
    return found


def test_every_snippet_is_shown_on_a_page():
    unused = [s.name for s in discover(STORE.snippets_dir) if s.name not in cited()]
    assert not unused, (
        f"snippets no page shows: {unused}. Add a `/// recorded | NAME` block to a page in "
        "docs/, or delete the snippet."
    )


def test_every_block_names_an_existing_snippet():
    names = {s.name for s in discover(STORE.snippets_dir)}
    dangling = {name: where for name, where in cited().items() if name not in names}
    assert not dangling, f"blocks naming no snippet under snippets/: {dangling}"


def test_every_recording_belongs_to_a_snippet():
    orphans = [p.relative_to(ROOT).as_posix() for p in STORE.orphans()]
    assert not orphans, f"recordings for no snippet (renamed or deleted?): {orphans}; delete them."


@pytest.mark.parametrize("path", STORE.recording_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_recording_is_readable(path):
    STORE.load(path)  # raises RecordingError naming the file and the fix


def test_the_tree_guard_names_what_a_test_wrote(tmp_path):
    from tree_guard import changes, snapshot

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "kept.txt").write_text("a")
    (tmp_path / "edited.txt").write_text("a")
    before = snapshot(tmp_path)
    (tmp_path / "edited.txt").write_text("b")
    (tmp_path / "new.json").write_text("{}")
    after = snapshot(tmp_path)
    assert before is not None and after is not None
    assert changes(before, after) == ["edited.txt (changed)", "new.json (added)"]
