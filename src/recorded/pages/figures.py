"""Figures drawn from the recordings, for any lesson.

A lesson lists its figures in a module of its own (``figures = "…py"`` in its
``[tool.recorded.lessons.<name>]`` entry), which defines ``FIGURES``: each a
:class:`Figure`, a name and two functions, one that reads its data from the recordings
and one that draws that data with matplotlib. Each is drawn to an SVG under the lesson's
``figures_dir`` whose metadata carries the sha256 of that data, so a test can tell when a
re-recording has made it out of date without comparing pictures.
The project's script (here scripts/make_figures.py) redraws them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.lessons import Lesson
from ..model.machines import Machine
from ..model.snippets import load
from ..model.store import WITH_OUTPUT, State, Store

#: A printed number, as the figures' patterns read one.
NUMBER = r"([0-9.]+(?:e[+-]?\d+)?)"


@dataclass(frozen=True)
class Figure:
    name: str
    data: Callable[[Store], dict]
    draw: Callable[[dict], Any]  # a matplotlib Figure


@dataclass(frozen=True)
class Printed:
    """What a good recording shown on the pages printed, on which machine, and whether it ran
    an earlier version of the snippet's code (the pages say so under it; a figure says so too)."""

    lines: list[str]
    machine: Machine
    earlier: bool


def printed(store: Store, snippet: str, target: str) -> Printed | None:
    """The good recording of the snippet on the target that its page shows (fresh, or of an
    earlier version of its code), or None."""
    status = store.status(load(store.snippets_dir, snippet, store.targets), target)
    rec = status.recording
    if rec is None or rec.status != "ok" or status.state not in WITH_OUTPUT:
        return None
    return Printed(rec.stdout, rec.machine, status.state is State.STALE)


def search(pattern: str, lines: list[str]) -> re.Match | None:
    """The first match of pattern in any of the lines."""
    return next((m for line in lines if (m := re.search(pattern, line))), None)


def find(pattern: str, lines: list[str], where: str) -> re.Match:
    """The first match of pattern in the lines; a LookupError naming both if none matches
    (the snippet's output changed: the figure's reader must change with it)."""
    m = search(pattern, lines)
    if m is None:
        raise LookupError(f"{where}: no printed line matches {pattern!r}")
    return m


#: One width for every figure, in inches, and its font size in points. An SVG is shown at its
#: natural size (1 pt = 1.333 CSS px) when it is narrower than the page's column and scaled
#: down to the column when wider. 5.2 in is 499 px: natural size on a desktop (a 700-760 px
#: column), where 12 pt is 16 px; on a 390 px phone (a 358 px column) it is scaled by
#: 358/499, and 12 pt is 11.5 px. Panels stack, never side by side, so one drawing serves both.
WIDTH = 5.2
FONT_SIZE = 12


def new_figure(height: float, nrows: int = 1, height_ratios: list[float] | None = None):
    """A figure WIDTH wide with nrows panels stacked, on a white card."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.hashsalt": "recorded",
            "font.size": FONT_SIZE,
            "axes.titlesize": FONT_SIZE,
            "axes.labelsize": FONT_SIZE,
            "xtick.labelsize": FONT_SIZE,
            "ytick.labelsize": FONT_SIZE,
            "legend.fontsize": FONT_SIZE,
            "figure.titlesize": FONT_SIZE + 1,
            "svg.fonttype": "path",
        }
    )
    # A white card, so the figure reads the same in the light and the dark palette.
    return plt.subplots(
        nrows,
        1,
        figsize=(WIDTH, height),
        facecolor="white",
        layout="constrained",
        gridspec_kw={"height_ratios": height_ratios} if height_ratios else None,
    )


def lesson_figures(root: Path, lesson: Lesson) -> tuple[Figure, ...]:
    """The FIGURES of the lesson's figures module (none when it declares no module)."""
    if not lesson.figures:
        return ()
    path = Path(root) / lesson.figures
    if not path.is_file():
        raise FileNotFoundError(
            f"pyproject.toml: lesson {lesson.name}'s figures module {lesson.figures} does not exist."
        )
    spec = importlib.util.spec_from_file_location(f"_figures_{lesson.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(
            f"pyproject.toml: lesson {lesson.name}'s figures module {lesson.figures} cannot be loaded."
        )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures = getattr(module, "FIGURES", None)
    if not isinstance(figures, (list, tuple)) or not all(isinstance(f, Figure) for f in figures):
        raise TypeError(f"{lesson.figures} must define FIGURES, a list of recorded.figures.Figure.")
    return tuple(figures)


def data_hash(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def path(out_dir: Path, fig: Figure) -> Path:
    return out_dir / f"{fig.name}.svg"


def render(store: Store, out_dir: Path, fig: Figure) -> Path:
    data = fig.data(store)
    drawn = fig.draw(data)
    target = path(out_dir, fig)
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn.savefig(
        target, format="svg", metadata={"Date": None, "Description": f"data sha256 {data_hash(data)}"}
    )
    import matplotlib.pyplot as plt

    plt.close(drawn)
    return target


def out_of_date(store: Store, out_dir: Path, figures: tuple[Figure, ...]) -> list[str]:
    """Names of the figures whose file is missing or was drawn from other data."""
    stale = []
    for fig in figures:
        file = path(out_dir, fig)
        stamp = f"data sha256 {data_hash(fig.data(store))}"
        if not file.exists() or stamp not in file.read_text(encoding="utf-8"):
            stale.append(fig.name)
    return stale
