"""Shards: the snippets split across N runners of one kind of machine, balanced by their
recorded durations, the same on every runner. Standard library only."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..config.targets import Target
from ..model.snippets import Snippet
from ..model.store import Standing, State, Store
from .record import plan


def split(items: list[Standing], index: int, count: int) -> list[Standing]:
    """The items that runner ``index`` of ``count`` (1-based) takes, in their given order; the same
    on every runner: each target's applicable items, longest first (``weights``, then by name), each
    to the least-loaded runner (the lowest number on a tie)."""
    if not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: need 1 <= I <= N")
    taken: set[int] = set()
    for target in dict.fromkeys(i.target for i in items):
        group = [i for i in items if i.target == target and i.state is not State.NOT_APPLICABLE]
        seconds = weights(group)
        loads = [0.0] * count
        for item in sorted(group, key=lambda i: (-seconds[id(i)], i.snippet.name)):
            n = min(range(count), key=lambda k: (loads[k], k))
            loads[n] += seconds[id(item)]
            if n == index - 1:
                taken.add(id(item))
    return [i for i in items if id(i) in taken]


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` on one target: the recorder runs its items, --list shows them."""

    index: int
    count: int
    target: Target
    taken: tuple[Standing, ...]
    applicable: int  # the target's snippets that take part in any shard
    seconds: float  # this shard's expected time, by recorded durations
    total: float  # every shard's together
    durations_known: bool

    @property
    def names(self) -> frozenset[str]:
        return frozenset(i.snippet.name for i in self.taken)


def take(published: Store, snippets: list[Snippet], target: Target, which: tuple[int, int]) -> Shard:
    """Which of the snippets shard I/N takes on target, by the durations in ``published``
    (recordings/, the same on every runner, whatever --out says)."""
    index, count = which
    items = plan(published, snippets, (target,))
    taken = split(items, index, count)
    applicable = [i for i in items if i.state is not State.NOT_APPLICABLE]
    expected = weights(applicable)
    seconds, known = sum(expected[id(i)] for i in taken), any(i.last_duration is not None for i in items)
    return Shard(index, count, target, tuple(taken), len(applicable), seconds, sum(expected.values()), known)


def weights(items: list[Standing]) -> dict[int, float]:
    """Seconds each item is expected to take, by ``id(item)``: its last recorded duration (a
    stale or failed one's too), else the median of the known ones, or 1 s when none is known."""
    known = [i.last_duration for i in items if i.last_duration is not None]
    guess = statistics.median(known) if known else 1.0
    return {id(i): (i.last_duration if i.last_duration is not None else guess) for i in items}
