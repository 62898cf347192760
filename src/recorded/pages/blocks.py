"""The ``recorded`` block of a page: which snippet it shows and what it claims.

    /// recorded | my_lesson/02_topic.py
    expect:
      - "float16 max: 65504"
    expect_on:
      cpu:
        - "vectorised at least 10x faster here: True"
    ///

The body is YAML checked here: pymdownx.blocks silently drops a block whose options fail
validation, and a dropped claim is never checked. ``read`` is the one reader of a page's blocks
and fences (extension, Sybil, notebook, benchmark), with Sybil's fence rules and pymdownx's
block ends. A nested block is marked ``nested``, so each reader reports it instead of skipping it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from ..config import targets as targets_

NAME = "recorded"
KEYS = ("expect", "expect_on", "highlight", "unfold")
#: A block's header; ``prefix`` (indentation, ``>`` or a list marker) is empty at the left margin.
HEADER = re.compile(
    rf"^(?P<prefix>[ \t>]*(?:(?:[-*+]|\d+[.)])[ \t]+)?)(?P<slashes>/{{3,}})[ \t]*"
    rf"(?i:{NAME})(?![\w-])[ \t]*(?:\|[ \t]*(?P<argument>.*?))?[ \t]*$"
)
#: Any pymdownx.blocks header (admonition, details, tab, ...) and any block's end, as pymdownx reads them.
_ANY_HEADER = re.compile(r"^[ ]{0,3}(?P<slashes>/{3,})[ ]*[\w-]+")
_END = re.compile(r"^[ ]{0,3}(?P<slashes>/{3,})[ ]*$")
#: Sybil's Markdown fence (sybil.parsers.markdown.lexers.FENCE), read a line at a time.
FENCE = re.compile(
    r"^(?P<prefix>(?:[ \t]*>)+[ \t]*|[ \t]*(?:[-*+]|\d+[.)])[ \t]+|[ \t]*)"
    r"(?P<fence>`{3,}|~{3,})(?P<trailing>.*)$"
)
#: libyaml's parser where PyYAML was built with it (a page's blocks are read on every build).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BlockError(ValueError):
    """A malformed block; the message says what to write instead."""


@dataclass(frozen=True)
class Block:
    snippet: str
    expect: tuple[str, ...] = ()
    expect_on: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The snippet's regions this block shows open: where a page teaches what they hold.
    unfold: tuple[str, ...] = ()
    #: The claims whose lines the page marks, each as written under expect or expect_on.
    highlight: tuple[str, ...] = ()
    #: Line of each claim, counted from the block's first body line (0), for messages.
    claim_lines: dict[str, int] = field(default_factory=dict, compare=False)

    def claims_for(self, target: str) -> tuple[tuple[str, ...], ...]:
        """The ``expect`` lines in order, and separately the target's own (they may interleave)."""
        return tuple(group for group in (self.expect, self.expect_on.get(target, ())) if group)


def anchor(snippet: str) -> str:
    """The HTML id of a snippet's block: my_lesson/06_timing.py -> my-lesson-06-timing."""
    return re.sub(r"[^a-z0-9]+", "-", snippet.removesuffix(".py").lower()).strip("-")


def _lines(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(type(v) in (str, int, float) for v in value):  # no bool
        raise BlockError(f"{where} must be a list of printed lines, each a quoted string.")
    return tuple(str(v) for v in value)


def parse(
    argument: str | None, body: str, targets: tuple[str, ...] | None = None, first_line: int | None = None
) -> Block:
    """Read a block's claims; ``expect_on`` may name only ``targets`` (by default the current
    folder's pyproject.toml's). ``first_line``: the page's line of the body's first line."""
    if targets is None:
        targets = targets_.load(Path.cwd()).names
    snippet = (argument or "").strip()
    if not snippet:
        raise BlockError("the header names no snippet; write `/// recorded | my_lesson/01_intro.py`.")
    data = node = None
    if body.strip():
        try:  # the pure-Python loader reads (and may refuse) the body as soon as it is made
            loader = _LOADER(body)  # one parse gives the data and the nodes (for the claims' lines)
            try:
                node = loader.get_single_node()
                data = loader.construct_document(node) if node is not None else None
            finally:
                loader.dispose()
        except yaml.YAMLError as exc:
            raise BlockError(_yaml_problem(exc, body, first_line)) from None
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise BlockError("its body must be YAML keys (expect:, expect_on:), not a bare value.")
    if unknown := [k for k in data if k not in KEYS]:
        raise BlockError(f"unknown key(s) {unknown}; the keys are {list(KEYS)}.")
    expect = _lines(data.get("expect", []), "expect")
    on = data.get("expect_on", {}) or {}
    if not isinstance(on, dict):
        raise BlockError(f"expect_on must map a target ({', '.join(targets)}) to a list of lines.")
    if bad := [t for t in on if t not in targets]:
        raise BlockError(
            f"expect_on names unknown target(s) {bad}; the targets are {list(targets)} "
            "(declared in pyproject.toml under [tool.recorded.targets])."
        )
    expect_on = {t: _lines(v, f"expect_on.{t}") for t, v in on.items()}
    unfold = data.get("unfold", [])
    if not isinstance(unfold, list) or not all(isinstance(v, str) for v in unfold):
        raise BlockError("unfold must be a list of the snippet's region names, each a quoted string.")
    highlight = _lines(data.get("highlight", []), "highlight")
    claimed = {*expect, *(line for group in expect_on.values() for line in group)}
    if stray := [line for line in highlight if line not in claimed]:
        raise BlockError(
            f"highlight lists {stray}, which is not a claim; copy each line from expect or "
            "expect_on as it is written there."
        )
    return Block(snippet, expect, expect_on, tuple(unfold), highlight, _claim_lines(node))


def _yaml_problem(exc: yaml.YAMLError, body: str, first_line: int | None) -> str:
    """A YAML error with its line (the page's when known), the line itself, and what YAML found."""
    mark = getattr(exc, "problem_mark", None)
    what = " ".join(str(getattr(exc, "problem", None) or exc).split())
    if mark is None:
        return f"its body is not valid YAML: {what}."
    lines = body.splitlines()
    text = lines[mark.line].strip() if mark.line < len(lines) else ""
    where = f"line {mark.line + 1} of its body" if first_line is None else f"line {first_line + mark.line}"
    shown = f": `{text}`" if text else ""
    return f"its body is not valid YAML at {where}{shown} ({what}); claims are quoted strings in a list."


def _claim_lines(node: yaml.Node | None) -> dict[str, int]:
    """The body line of each string value (of its last occurrence), from the YAML node marks."""
    if isinstance(node, yaml.ScalarNode):
        return {node.value: node.start_mark.line}
    values = [v for _, v in node.value] if isinstance(node, yaml.MappingNode) else getattr(node, "value", [])
    return {claim: line for value in values for claim, line in _claim_lines(value).items()}


NESTED = (
    "it is indented or nested inside another block (an admonition, a list, a tab), where the "
    "tests and the notebook do not read it; start it at the left margin."
)
UNCLOSED = "it has no closing `///` line; end the block with one."


@dataclass(frozen=True)
class Fence:
    """A fenced code example: lines ``start`` to ``end`` (1-based; ``end`` None: never closed)."""

    start: int
    end: int | None


@dataclass(frozen=True)
class Found:
    """A ``/// recorded`` header and what follows it, as the page has it (not yet parsed)."""

    line: int  #: the header's line, 1-based
    argument: str  #: the snippet path as written
    body: str  #: the lines between header and closing line, the header's prefix removed
    end: int | None  #: the closing `///` line, 1-based; None: the block is never closed
    prefix: str = ""  #: what stands before the header's slashes; '' at the left margin
    inside: str | None = None  #: the header of the pymdownx block it sits in, if any

    @property
    def nested(self) -> bool:
        return bool(self.prefix) or self.inside is not None

    @property
    def problem(self) -> str | None:
        """Why no reader may take its claims, or None."""
        return NESTED if self.nested else UNCLOSED if self.end is None else None


@dataclass(frozen=True)
class Page:
    blocks: tuple[Found, ...]
    fences: tuple[Fence, ...]
    lines: int  #: how many lines the page has

    def fenced(self) -> set[int]:
        """The 1-based numbers of the lines of fenced examples, their fence lines included."""
        return {n for f in self.fences for n in range(f.start, (f.end or self.lines) + 1)}


def _with_fences(numbered: Iterator[tuple[int, str]], fences: list[Fence]) -> Iterator[tuple[int, str, bool]]:
    """Each line with whether it belongs to a fenced example; each fence goes to ``fences``."""
    opening: re.Match[str] | None = None
    start = 0
    for number, line in numbered:
        m = FENCE.match(line)
        fenced = opening is not None or m is not None
        if opening is None and m:
            opening, start = m, number
        # Sybil's RawFencedCodeBlockLexer.match_closes_existing (a fence is one character repeated).
        elif (
            opening
            and m
            and m["fence"].startswith(opening["fence"])
            and len(m["prefix"]) == len(opening["prefix"])
            and not m["trailing"].strip()
        ):
            fences.append(Fence(start, number))
            opening = None
        yield number, line, fenced
    if opening is not None:
        fences.append(Fence(start, None))


def read(text: str | list[str]) -> Page:
    """Every ``/// recorded`` block of a page and every fenced example, in page order. A header
    in a fence is no block; a body ends at the first unfenced line of as many slashes (pymdownx's rule)."""
    lines = text.split("\n") if isinstance(text, str) else list(text)
    found: list[Found] = []
    fences: list[Fence] = []
    generic: list[tuple[int, str]] = []  # open pymdownx blocks: (slash count, header line)
    numbered = iter(enumerate(lines, 1))  # shared: a block's reader takes its lines from it
    for number, line, fenced in _with_fences(numbered, fences):
        if fenced:
            continue
        if h := HEADER.match(line):
            prefix, end, body = h["prefix"], None, []
            # A nested block's lines carry its indentation (or quoting): read them without it.
            inner = (
                (n, raw[len(prefix) :] if not raw[: len(prefix)].strip(" \t>") else raw.lstrip())
                for n, raw in numbered
            )
            # A fenced line cannot close it: superfences hides fenced lines from pymdownx.
            for n, raw, in_fence in _with_fences(inner, fences):
                if not in_fence and (e := _END.match(raw)) and len(e["slashes"]) == len(h["slashes"]):
                    end = n
                    break
                body.append(raw)
            inside = generic[-1][1] if generic else None
            found.append(Found(number, (h["argument"] or "").strip(), "\n".join(body), end, prefix, inside))
        elif (e := _END.match(line)) and generic and len(e.group("slashes")) == generic[-1][0]:
            generic.pop()
        elif g := _ANY_HEADER.match(line):
            generic.append((len(g.group("slashes")), line.strip()))
    return Page(tuple(found), tuple(sorted(fences, key=lambda f: f.start)), len(lines))


def headers(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, argument) of each block at the left margin, in page order: the blocks
    whose claims the tests check. A header shown inside a fenced example is not a block."""
    return [(b.line, b.argument) for b in read(lines).blocks if not b.nested]


def snippet_problem(error: Exception, snippets_dir: Path, name: str) -> str:
    """A snippet error's message, naming the nearest existing snippet when the name is mistyped:
    close as a whole and in the file's own name (`lesson/nope.py` is no typo of `lesson/x.py`)."""
    if (snippets_dir / name).is_file():
        return str(error)  # it exists: whatever is wrong with it, it is not the name
    names = [
        p.relative_to(snippets_dir).as_posix()
        for p in snippets_dir.rglob("*.py")
        if "__pycache__" not in p.parts
    ]
    stem = PurePosixPath(name.strip()).stem
    for near in difflib.get_close_matches(name.strip(), names, n=5, cutoff=0.6):
        if difflib.SequenceMatcher(None, stem, PurePosixPath(near).stem).ratio() >= 0.6:
            return f"{error} Did you mean `/// recorded | {near}`?"
    return str(error)
