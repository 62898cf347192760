"""The line rules the pages, ``--compare`` and the fresh-run counts share. Standard library only.
A *verdict line*'s value, the text after its last ``": "``, is one of ``VERDICTS``: a snippet's
answer about the machine (``bf16 vs fp32 here: faster``); the text before it, spaces collapsed,
is its *label*. A *timing line* is any other line holding a number and a unit of time (ms, s,
µs, us, ns), such as "float32:  16.70 ms per batch"; its label is the text before the first
such number, its value every such number, as printed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

#: The lesson's three timing verdicts, and the answers to yes-or-no questions.
VERDICTS = ("faster", "slower", "within noise", "True", "False")
#: The verdicts a timing comparison gives (a True or False answers a question of fact).
TIMING_VERDICTS = VERDICTS[:3]
_NUMBER = r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_TIMING = re.compile(rf"{_NUMBER}\s?(?:ms|s|µs|us|ns)(?![\w])")


def verdict(line: str) -> tuple[str, str] | None:
    """(label, value) of a verdict line, or None. A label holding a claim's ``...`` wildcard
    is not one label, so such a claim names no row."""
    label, sep, value = line.strip().rpartition(": ")
    label = " ".join(label.split())
    return (label, value) if sep and label and value in VERDICTS and "..." not in label else None


@dataclass(frozen=True)
class Line:
    kind: str  # "verdict" or "timing"
    label: str
    value: str


def scan(stdout: list[str]) -> Iterator[tuple[int, Line, int]]:
    """The verdict and timing lines of one output, in order: (line number from 1, the line, its
    occurrence: how many earlier lines have its kind and label)."""
    seen: Counter[tuple[str, str]] = Counter()
    for number, raw in enumerate(stdout, 1):
        text = raw.rstrip()
        if said := verdict(text):
            line = Line("verdict", *said)
        elif timings := list(_TIMING.finditer(text)):
            label = " ".join(text[: timings[0].start()].split()).rstrip(" :|=-,(")
            if not label:
                label = " ".join(text[timings[0].end() :].split()).strip(" :|=-,()") or "(unlabelled)"
            line = Line("timing", label, " / ".join(t.group(0) for t in timings))
        else:
            continue
        yield number, line, seen[line.kind, line.label]
        seen[line.kind, line.label] += 1


def parse(stdout: list[str]) -> dict[tuple[str, str, int], Line]:
    """The verdict and timing lines of one output by (kind, label, occurrence), to pair across machines."""
    return {(line.kind, line.label, n): line for _, line, n in scan(stdout)}


def shown_label(label: str, nth: int) -> str:
    """A label as a table shows it, with its place when the output repeats it: "fast here (2)"."""
    return f"{label} ({nth + 1})" if nth else label


def answers(outputs: list[list[str]], label: str, nth: int = 0) -> list[str | None]:
    """What each run said on its ``nth`` verdict line with this label (None where it printed none)."""
    said = [[v[1] for line in stdout if (v := verdict(line)) and v[0] == label] for stdout in outputs]
    return [run[nth] if nth < len(run) else None for run in said]


def runs_note(outputs: list[list[str]], value: str, label: str, nth: int = 0) -> str:
    """How often the fresh runs gave ``value`` on that verdict line: "in 3 of 3 runs", and what
    the others said ("in 2 of 3 runs; within noise in 1")."""
    said = answers(outputs, label, nth)
    rest = sorted({a for a in said if a != value}, key=str)
    others = "; " + ", ".join(f"{a or 'not printed'} in {said.count(a)}" for a in rest) if rest else ""
    return f"in {said.count(value)} of {len(said)} run{'s' * (len(said) != 1)}{others}"
