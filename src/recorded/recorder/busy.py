"""How busy the machine is: the share of its CPUs that other work used in a short window.

Standard library only. Measured before and after a timing snippet runs, while the recorder sleeps,
so whatever ran was somebody else. A load average lags by a minute and counts the recorder's run."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..model import busy

WINDOW_S = 0.25  # 25 jiffies of each CPU at 100 Hz: a share to about 2%


def _cpu_jiffies(stat: Path = Path("/proc/stat")) -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, or None where /proc/stat is absent."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if first[0] != "cpu":
        return None
    # user nice system idle iowait irq softirq steal (guest time is inside user already)
    values = [int(v) for v in first[1:9]]
    return sum(values) - sum(values[3:5]), sum(values)  # all but idle and iowait, of all


def other_load(window_s: float = WINDOW_S, stat: Path = Path("/proc/stat")) -> tuple[float, str] | None:
    """The share (0..1) of all CPUs other work used during ``window_s`` seconds, and how; None if unknown."""
    start = _cpu_jiffies(stat)
    if start is None:
        if hasattr(os, "getloadavg"):  # macOS and others: a coarser, lagging figure
            return min(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)), "1-minute load average / CPUs"
        return None
    time.sleep(window_s)
    end = _cpu_jiffies(stat)
    if end is None or end[1] <= start[1]:
        return None
    return (end[0] - start[0]) / (end[1] - start[1]), f"/proc/stat over {window_s:g} s"


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def describe(figure: dict) -> str:
    return busy.words(figure) or "other load unknown"
