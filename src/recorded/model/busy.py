"""How busy a machine was around a timing run, as a recording stores it (``{"before": 0.03,
"after": 0.01}``: the share of its CPUs other work used), and the one limit above which its
timings are not to be trusted, for the recorder, the pages and ``--compare``."""

from __future__ import annotations

from collections.abc import Iterable

#: Above this share of the CPUs used by other work, timings are not to be trusted.
LIMIT = 0.25
_WHEN = ("before", "after")


def shares(figure: object) -> dict[str, float]:
    """The readable shares of a figure, by when measured; none from what is not a share."""
    if not isinstance(figure, dict):
        return {}
    return {
        when: float(v)
        for when in _WHEN
        if isinstance(v := figure.get(when), (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
    }


def too_busy(figures: object | Iterable[object]) -> bool:
    """Whether other work used more than LIMIT around a run (one figure) or any of several."""
    return worst(figures if isinstance(figures, (list, tuple)) else [figures]) > LIMIT


def worst(figures: Iterable[object]) -> float:
    """The largest share other work used around any of the runs; 0.0 when none was measured."""
    return max((share for figure in figures for share in shares(figure).values()), default=0.0)


def words(figure: object) -> str | None:
    """``other load 3% before, 1% after``; None when the figure holds no readable share."""
    shown = [f"{round(share * 100)}% {when}" for when, share in shares(figure).items()]
    return f"other load {', '.join(shown)}" if shown else None
