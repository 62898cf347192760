"""Which runs fit in a time budget (a lent GPU machine's call has minutes, not hours), by the
durations the project's recordings store.

Standard library only. An item's estimate is its last recording's first run times the runs it
will make; an item never recorded counts as the longest known one, so a budget is not spent on a
guess. What renews most comes first: missing, stale or failed before fresh, a target with a
device (the rarest machine) first, then the oldest recordings; what does not fit is left, and said.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.store import Standing, State, Store


@dataclass(frozen=True)
class Plan:
    kept: list[Standing]  #: what runs, in the order given
    left: list[Standing]  #: what did not fit the budget
    seconds: float  #: the estimate of what runs
    guessed: int  #: items of ``kept`` with no stored duration, counted as the longest known


def fit(published: Store, work: list[Standing], runs: int, budget: float | None) -> Plan:
    """The items of ``work`` that fit ``budget`` seconds (all without one), judged by where each
    stands in the project (``published``), whatever store they record into."""
    where = {id(i): published.standing(i.snippet, i.target) for i in work}
    known = {
        key: s.recording.duration_s * (runs if s.snippet.timing else 1) if s.recording else None
        for key, s in where.items()
    }
    longest = max((s for s in known.values() if s is not None), default=60.0)
    cost = {key: longest if s is None else s for key, s in known.items()}

    def first(item: Standing) -> tuple:
        now = where[id(item)]
        device = item.target.needs_device
        return (now.state is State.FRESH, not device, now.recording.recorded_at if now.recording else "")

    chosen, spent = set(), 0.0
    for item in sorted(work, key=first):
        if budget is None or spent + cost[id(item)] <= budget:
            chosen.add(id(item))
            spent += cost[id(item)]
    kept = [i for i in work if id(i) in chosen]
    return Plan(
        kept,
        [i for i in work if id(i) not in chosen],
        sum(cost[id(i)] for i in kept),
        sum(known[id(i)] is None for i in kept),
    )
