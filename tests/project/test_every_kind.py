"""A fresh clone passes on every kind of machine, not only on the one CI happens to get.

For each declared kind, and for a machine of no declared kind, a copy of the project is taken
for that machine (RECORDED_KINDS_HERE, model/renewal.py) with none of that kind's recordings,
as a newcomer's clone on a machine nobody recorded: the strict build passes, every claim of
every page holds in every recording, ``--check`` passes, and the examples that kind could
show say it has not recorded them yet. The live runs follow the real machine (checks/live.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from site_tools import copy_site

from projects import mkdocs_build
from recorded import cli
from recorded.checks.sybil import RecordedParser
from recorded.config import targets
from recorded.model import renewal
from recorded.model.snippets import load
from recorded.pages import blocks

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[2]
TARGETS = targets.load(ROOT)
KINDS = [*TARGETS.names, ""]  # "": a machine of none of the declared kinds


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """One copy of the project for every kind: each test moves its kind's recordings aside and
    back, and the builds share the copy's caches."""
    return copy_site(ROOT, tmp_path_factory.mktemp("every-kind") / "project")


@pytest.fixture
def as_kind(clone, request, monkeypatch) -> Iterator[tuple[Path, str]]:
    kind = request.param
    aside = clone.parent / "aside"
    if kind:
        shutil.move(clone / "recordings" / kind, aside)
    monkeypatch.setenv(renewal.KINDS_HERE, kind)
    monkeypatch.delenv("RECORDINGS_STRICT", raising=False)
    try:
        yield clone, kind
    finally:
        if kind:
            shutil.move(aside, clone / "recordings" / kind)


@pytest.mark.parametrize("as_kind", KINDS, ids=[k or "unknown" for k in KINDS], indirect=True)
def test_a_fresh_clone_passes_as_every_kind_with_none_of_its_recordings(as_kind, capsys):
    root, kind = as_kind
    site = root.parent / f"site-{kind or 'unknown'}"
    done = mkdocs_build(root, site)
    assert done.returncode == 0, f"the strict build as {kind or 'an unknown kind'} failed:\n{done.stderr}"

    parser = RecordedParser(root)
    problems = []
    shown: list[tuple[str, str]] = []  # (page, snippet) of each block that kind could show
    for page in sorted((root / "docs").rglob("*.md")):
        for found in blocks.read(page.read_text(encoding="utf-8")).blocks:
            spec = blocks.parse(found.argument, found.body, TARGETS.names, found.line + 1)
            snippet = load(root / "snippets", spec.snippet, TARGETS)
            problems += parser.recording_problems(spec, snippet, lambda claim, name=page.name: name)
            if kind and snippet.runs_on(TARGETS.get(kind)):
                shown.append((page.relative_to(root / "docs").with_suffix("").as_posix(), snippet.name))
    assert problems == []

    assert cli.main(["--check"], root=root) == 0, capsys.readouterr().out
    tab = TARGETS.get(kind).tab if kind else ""
    for page, name in shown:
        html = (site / page / "index.html").read_text(encoding="utf-8")
        block = html.split(f'id="{blocks.anchor(name)}"', 1)[1].split('<div class="recorded"', 1)[0]
        assert "Not recorded yet on" in block and tab in block.split("Not recorded yet on", 1)[1][:200], (
            f"{page}: {name} does not say it is not recorded yet on {tab}"
        )
