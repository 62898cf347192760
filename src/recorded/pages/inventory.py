"""Every snippet on every target: its state, its recording, and the machines that made them
(the recordings page and its execution statistics). Standard library only."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..config.lessons import Lesson, lesson_of
from ..config.targets import Target
from ..model import describe
from ..model.machines import Machine
from ..model.snippets import discover
from ..model.store import Standing, State, Store


def recordings_page(docs_dir: Path) -> str | None:
    """The page under docs/ that describes every recording and machine (its ``/// recordings``
    block), where each output's provenance line links; None in a site without one."""
    for page in sorted(Path(docs_dir).rglob("*.md")):
        if any(line.startswith("/// recordings") for line in page.read_text(encoding="utf-8").splitlines()):
            return page.relative_to(docs_dir).as_posix()
    return None


def entries(store: Store, problems: list[str]) -> list[Standing]:
    """Every snippet on every target; a snippet that cannot be read is left out and said in
    ``problems``."""
    return [
        store.standing(snippet, target)
        for snippet in discover(store.snippets_dir, store.targets, problems)
        for target in store.targets
    ]


def by_lesson(items: list[Standing], declared: dict[str, Lesson]) -> dict[str, list[Standing]]:
    """The entries grouped by lesson: the declared lessons first, in their order, then the
    other folders under snippets/ by name."""
    groups: dict[str, list[Standing]] = {}
    for e in items:
        groups.setdefault(lesson_of(e.snippet.name), []).append(e)
    order = [name for name in declared if name in groups] + sorted(set(groups) - set(declared))
    return {name: groups[name] for name in order}


@dataclass
class Recorded:
    """What one machine recorded: on which targets, how many recordings."""

    machine: Machine
    targets: set[Target] = field(default_factory=set)
    count: int = 0


def machines(items: list[Standing]) -> dict[str, Recorded]:
    """One entry per distinct machine, by its description."""
    found: dict[str, Recorded] = {}
    for e in items:
        if e.recording is None:
            continue
        m = e.recording.machine
        entry = found.setdefault(describe.machine(m), Recorded(m))
        entry.targets.add(e.target)
        entry.count += 1
    return found


def totals(items: list[Standing]) -> str:
    """A one-line summary, like Sphinx-Gallery's execution statistics."""
    states = Counter(e.state for e in items)
    seconds = sum(e.recording.duration_s for e in items if e.recording and e.state is State.FRESH)
    parts = [f"{states[s]} {s.value}" for s in State if states[s]]
    snippets = len({e.snippet.name for e in items})
    targets = len({e.target for e in items})
    return (
        f"{snippets} snippets on {targets} targets: {', '.join(parts)}. "
        f"The fresh recordings ran for {seconds:.1f} s in all."
    )
