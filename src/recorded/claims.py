"""Claims: lines a page says a snippet prints, matched in order with doctest-style ``...``.

A claim matches one whole output line (trailing spaces ignored); ``...`` in a claim
matches any run of characters within that line. Claims match in the order they are
written, each on a later line than the one before.
"""

from __future__ import annotations

import difflib

ELLIPSIS = "..."


def line_matches(claim: str, line: str) -> bool:
    claim, line = claim.rstrip(), line.rstrip()
    pieces = claim.split(ELLIPSIS)
    if len(pieces) == 1:
        return claim == line
    first, *middle, last = pieces
    if not line.startswith(first) or not line.endswith(last):
        return False
    pos, end = len(first), len(line) - len(last)
    if pos > end:
        return False
    for piece in middle:
        found = line.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def match(claims: list[str], lines: list[str]) -> list[int | None]:
    """For each claim, the index of the line it matched, or None.

    Earliest-first matching finds an in-order match whenever one exists. After a miss,
    the next claim is looked for from the same place, so one wrong claim is reported
    alone rather than dragging every later one down with it.
    """
    found: list[int | None] = []
    pos = 0
    for claim in claims:
        index = next((i for i in range(pos, len(lines)) if line_matches(claim, lines[i])), None)
        found.append(index)
        if index is not None:
            pos = index + 1
    return found


def explain(claims: list[str], lines: list[str], found: list[int | None], locate=lambda claim: "") -> str:
    """A readable report of the claims that did not match, with a diff to the nearest line.

    ``locate(claim)`` may name where the claim is written, such as ``docs/page.md:34``.
    """
    parts = []
    for claim, index in zip(claims, found):
        if index is not None:
            continue
        near = difflib.get_close_matches(claim, lines, n=1, cutoff=0.0)
        at = locate(claim)
        parts.append(f"claim{f' at {at}' if at else ''} not found in order: {claim!r}")
        if near:
            diff = difflib.ndiff([claim], [near[0]])
            parts.append("  nearest printed line (- claimed, + printed):")
            parts.extend(f"    {d}" for d in diff)
    parts.append("printed:")
    parts.extend(f"  | {line}" for line in lines or ["(nothing)"])
    return "\n".join(parts)
