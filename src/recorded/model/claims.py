"""Claims: lines a page says a snippet prints, each matching one whole later output line
(trailing spaces ignored), ``...`` matching any run of characters within that line."""

from __future__ import annotations

import difflib

ELLIPSIS = "..."
#: Said with every claim that is not printed, by the site build and by the tests alike.
RULE = "a claim matches a whole printed line, and `...` in it stands for any text within that line"


def line_matches(claim: str, line: str) -> bool:
    claim, line = claim.rstrip(), line.rstrip()
    pieces = claim.split(ELLIPSIS)
    if len(pieces) == 1:
        return claim == line
    first, *middle, last = pieces
    pos, end = len(first), len(line) - len(last)
    if pos > end or not line.startswith(first) or not line.endswith(last):
        return False
    for piece in middle:
        found = line.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def match(claims: list[str], lines: list[str]) -> list[int | None]:
    """For each claim, the index of the line it matched in order, or None. After a miss the next
    claim is looked for from the same place, so one wrong claim is reported alone."""
    found: list[int | None] = []
    pos = 0
    for claim in claims:
        index = next((i for i in range(pos, len(lines)) if line_matches(claim, lines[i])), None)
        found.append(index)
        if index is not None:
            pos = index + 1
    return found


def nearest(claim: str, lines: list[str]) -> str | None:
    """The printed line most like ``claim`` (None when nothing was printed)."""
    near = difflib.get_close_matches(claim, lines, n=1, cutoff=0.0)
    return near[0] if near else None


def explain(claims: list[str], lines: list[str], found: list[int | None], locate=lambda claim: "") -> str:
    """A report of the claims that did not match, with a diff to the nearest line;
    ``locate(claim)`` may name where the claim is written, such as ``docs/page.md:34``."""
    parts = []
    for claim, index in zip(claims, found):
        if index is None:
            at = locate(claim)
            parts.append(f"claim{f' at {at}' if at else ''} not found in order: {claim!r}")
            if (near := nearest(claim, lines)) is not None:
                parts.append("  nearest printed line (- claimed, + printed):")
                parts.extend(f"    {d}" for d in difflib.ndiff([claim], [near]))
    parts += [f"({RULE}.)", "printed:", *(f"  | {line}" for line in lines or ["(nothing)"])]
    return "\n".join(parts)
