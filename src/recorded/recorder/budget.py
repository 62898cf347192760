"""Which runs fit in a time budget (a lent GPU machine's call has minutes), by stored durations.

Standard library only. An item never recorded counts as the longest known one. What renews most
comes first: not fresh before fresh, a target with a device (the rarest machine), the oldest."""

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
    """The items of ``work`` that fit ``budget`` seconds (all, without one), by ``published``'s durations."""
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
    kept, left = [i for i in work if id(i) in chosen], [i for i in work if id(i) not in chosen]
    return Plan(kept, left, sum(cost[id(i)] for i in kept), sum(known[id(i)] is None for i in kept))
