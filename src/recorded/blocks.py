"""The ``recorded`` block of a page: which snippet it shows and what it claims.

    /// recorded | my_lesson/02_topic.py
    expect:
      - "float16 max: 65504"
    expect_on:
      cpu:
        - "vectorised at least 10x faster here: True"
    ///

The body is YAML that this module checks itself: pymdownx.blocks drops a block whose
header options fail validation without a word, and a claim silently dropped is a claim
never checked. Shared by the Markdown extension and the Sybil parser, so the page and
its tests can never read a block differently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml


NAME = "recorded"
KEYS = ("expect", "expect_on")
#: A block's header line, as both readers find it.
HEADER = re.compile(rf"^/{{3,}}[ \t]*{NAME}(?![\w-])[ \t]*(?:\|[ \t]*(?P<argument>.*?))?[ \t]*$", re.M)
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


class BlockError(ValueError):
    """A malformed block; the message says what to write instead."""


@dataclass(frozen=True)
class Block:
    snippet: str
    expect: tuple[str, ...] = ()
    expect_on: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Line of each claim, counted from the block's first body line (0), for messages.
    claim_lines: dict[str, int] = field(default_factory=dict, compare=False)

    def claims_for(self, target: str) -> tuple[tuple[str, ...], ...]:
        """What a recording on ``target`` must print: the ``expect`` lines in order, and
        separately the target's own lines in order (the two lists may interleave)."""
        return tuple(group for group in (self.expect, self.expect_on.get(target, ())) if group)


def anchor(snippet: str) -> str:
    """The HTML id of a snippet's block: my_lesson/06_timing.py -> my-lesson-06-timing."""
    return re.sub(r"[^a-z0-9]+", "-", snippet.removesuffix(".py").lower()).strip("-")


def _lines(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        raise BlockError(f"{where} must be a list of printed lines, each a quoted string.")
    return tuple(str(v) for v in value)


def parse(argument: str | None, body: str, targets: tuple[str, ...] = ("cpu", "cuda")) -> Block:
    """Read a block; ``expect_on`` may name only the project's ``targets``."""
    snippet = (argument or "").strip()
    if not snippet:
        raise BlockError(
            "the header names no snippet; write `/// recorded | my_lesson/01_intro.py`."
        )
    try:
        data = yaml.safe_load(body) if body.strip() else {}
        node = yaml.compose(body) if body.strip() else None
    except yaml.YAMLError as exc:
        raise BlockError(f"its body is not valid YAML: {exc}".replace("\n", " ")) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BlockError("its body must be YAML keys (expect:, expect_on:), not a bare value.")
    unknown = [k for k in data if k not in KEYS]
    if unknown:
        raise BlockError(f"unknown key(s) {unknown}; the keys are {list(KEYS)}.")
    expect = _lines(data.get("expect", []), "expect")
    on = data.get("expect_on", {}) or {}
    if not isinstance(on, dict):
        raise BlockError(f"expect_on must map a target ({', '.join(targets)}) to a list of lines.")
    bad = [t for t in on if t not in targets]
    if bad:
        raise BlockError(f"expect_on names unknown target(s) {bad}; the targets are {list(targets)} "
                         "(declared in pyproject.toml under [tool.record-runs.targets]).")
    expect_on = {t: _lines(v, f"expect_on.{t}") for t, v in on.items()}
    return Block(snippet, expect, expect_on, _claim_lines(node))


def _claim_lines(node) -> dict[str, int]:
    """Where each claim string sits in the body, from the YAML node marks."""
    lines: dict[str, int] = {}
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            lines.setdefault(n.value, n.start_mark.line)
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            stack.extend(v for _, v in n.value)
    return lines


def headers(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, argument) of each block header outside fenced code, in page order.

    A header shown inside a fenced example (as on the contributing page) is not a block.
    """
    found, fence = [], None
    for number, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        if fence:
            closes = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closes and not line[m.end():].strip():
                fence = None
        elif m:
            fence = m.group(1)
        elif h := HEADER.match(line):
            found.append((number, (h.group("argument") or "").strip()))
    return found
