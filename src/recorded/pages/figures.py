"""Figures drawn from the recordings. A lesson's figures module (``figures = "…py"`` in
``[tool.recorded.lessons.<name>]``) defines ``FIGURES``, each a :class:`Figure` that reads its
data from the recordings and draws it with matplotlib into an SVG under the lesson's
``figures_dir``. Its metadata holds the sha256 of its data, so a test tells when a re-recording
made it out of date without comparing pictures. scripts/make_figures.py redraws them.
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
    """What a good recording shown on the pages printed, where, and whether it is stale (say so)."""

    lines: list[str]
    machine: Machine
    earlier: bool


def printed(store: Store, snippet: str, target: str) -> Printed | None:
    """The good recording of the snippet on the target that its page shows, or None."""
    standing = store.standing(load(store.snippets_dir, snippet, store.targets), store.targets[target])
    rec = standing.recording
    if rec is None or not rec.ok or standing.state not in WITH_OUTPUT:
        return None
    return Printed(rec.stdout, rec.machine, standing.state is State.STALE)


def search(pattern: str, lines: list[str]) -> re.Match | None:
    """The first match of pattern in any of the lines."""
    return next((m for line in lines if (m := re.search(pattern, line))), None)


def find(pattern: str, lines: list[str], where: str) -> re.Match:
    """The first match of pattern in the lines; a LookupError if none (the output changed)."""
    m = search(pattern, lines)
    if m is None:
        raise LookupError(f"{where}: no printed line matches {pattern!r}")
    return m


#: One width for every figure (inches) and font size (points). 5.2 in is 499 CSS px: natural size
#: in a desktop column (12 pt = 16 px), scaled by 358/499 in a phone's (12 pt = 11.5 px). Panels
#: stack, never side by side, so one drawing serves both.
WIDTH = 5.2
FONT_SIZE = 12


def new_figure(height: float, nrows: int = 1, height_ratios: list[float] | None = None):
    """A figure WIDTH wide with nrows panels stacked, on a white card."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = FONT_SIZE
    plt.rcParams.update({"font.size": size, "axes.titlesize": size, "axes.labelsize": size})
    plt.rcParams.update({"xtick.labelsize": size, "ytick.labelsize": size, "legend.fontsize": size})
    plt.rcParams.update({"svg.hashsalt": "recorded", "svg.fonttype": "path", "figure.titlesize": size + 1})
    # A white card, so the figure reads the same in the light and the dark palette.
    ratios = {"height_ratios": height_ratios} if height_ratios else None
    return plt.subplots(
        nrows, 1, figsize=(WIDTH, height), facecolor="white", layout="constrained", gridspec_kw=ratios
    )


def lesson_figures(root: Path, lesson: Lesson) -> tuple[Figure, ...]:
    """The FIGURES of the lesson's figures module (none when it declares no module)."""
    if not lesson.figures:
        return ()
    path, what = Path(root) / lesson.figures, f"pyproject.toml: lesson {lesson.name}'s figures module"
    if not path.is_file():
        raise FileNotFoundError(f"{what} {lesson.figures} does not exist.")
    spec = importlib.util.spec_from_file_location(f"_figures_{lesson.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{what} {lesson.figures} cannot be loaded.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures = getattr(module, "FIGURES", None)
    if not isinstance(figures, (list, tuple)) or not all(isinstance(f, Figure) for f in figures):
        raise TypeError(f"{lesson.figures} must define FIGURES, a list of recorded.figures.Figure.")
    return tuple(figures)


def _stamp(data: dict) -> str:
    """What an SVG's metadata says of the data it was drawn from."""
    return f"data sha256 {hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()}"


def path(out_dir: Path, fig: Figure) -> Path:
    return out_dir / f"{fig.name}.svg"


def render(store: Store, out_dir: Path, fig: Figure) -> Path:
    data = fig.data(store)
    drawn = fig.draw(data)
    target = path(out_dir, fig)
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn.savefig(target, format="svg", metadata={"Date": None, "Description": _stamp(data)})
    import matplotlib.pyplot as plt

    plt.close(drawn)
    return target


def out_of_date(store: Store, out_dir: Path, figures: tuple[Figure, ...]) -> list[Path]:
    """The figures' files that are missing or were drawn from other data."""
    return [
        file
        for fig in figures
        if not (file := path(out_dir, fig)).exists()
        or _stamp(fig.data(store)) not in file.read_text(encoding="utf-8")
    ]
