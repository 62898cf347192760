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
from ..model import describe
from ..model.machines import Machine
from ..model.snippets import load
from ..model.store import State, Store

#: A printed number, as the figures' patterns read one.
NUMBER = r"([0-9.]+(?:e[+-]?\d+)?)"


@dataclass(frozen=True)
class Figure:
    name: str
    data: Callable[[Store], dict]
    draw: Callable[[dict], Any]  # a matplotlib Figure


def fresh_stdout(store: Store, snippet: str, target: str) -> tuple[list[str], Machine] | None:
    """The printed lines and machine of a fresh, good recording, or None."""
    status = store.status(load(store.snippets_dir, snippet, store.targets), target)
    rec = status.recording
    return (rec.stdout, rec.machine) if status.state is State.FRESH and rec is not None else None


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


def machine_label(target, machine: Machine) -> str:
    """A short name for a legend: the device, or the CPU model with its most telling feature,
    or for an emulated target (the host's CPU with limits), the model and the limit."""
    if target.needs_device and machine.device:
        return str(machine.device.get("name"))
    model = machine.cpu.get("model") or "unknown CPU"
    model = re.sub(r"\((R|TM)\)", "", model).replace(" Processor", "").strip()
    if target.emulated:  # its features are not all in use
        return f"{model}, {target.label}"
    feature = describe.telling_features(machine)[:1]
    return f"{model}, {feature[0]}" if feature else model


def new_figure(width: float, height: float, ncols: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "recorded", "font.size": 10, "svg.fonttype": "path"})
    # A white card, so the figure reads the same in the light and the dark palette.
    return plt.subplots(1, ncols, figsize=(width, height), facecolor="white", layout="constrained")


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
