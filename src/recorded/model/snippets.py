"""Snippets: discovery, their PEP 723 metadata, and the targets each one runs on. Standard
library only: the recorder imports this on bare hardware runners."""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import re
import tokenize
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..config import TOOL
from ..config import targets as targets_
from ..config.targets import Target, Targets

DEFAULT_TIMEOUT = 300.0

# The reference expression from PEP 723 (inline script metadata).
_METADATA = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$\n?")
_TOOL_KEYS = {"requires", "timeout", "timing"}


class SnippetError(ValueError):
    """A snippet path or its metadata is not usable; the message says how to fix it."""


@dataclass(frozen=True)
class Snippet:
    name: str  #: path under snippets/, with forward slashes: ``my_lesson/01_intro.py``
    path: Path
    requires: frozenset[str] = frozenset()
    timeout: float | None = None
    #: It times something: the recorder measures how busy the machine was around its run.
    timing: bool = False
    dependencies: tuple[str, ...] = ()  #: what its header says it needs installed (PEP 723)

    def runs_on(self, target: Target) -> bool:
        return self.requires <= target.provides

    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def code_sha256(self) -> str:
        return code_sha256(self.path.read_bytes())

    def display_source(self) -> str:
        """The code as a page shows it: without the metadata header."""
        return strip_metadata(self.path.read_text(encoding="utf-8"))

    def segments(self) -> list[Segment]:
        """The shown code cut into the example's own lines and its regions, in order, without
        the marker comments. A region never closed runs to the end; regions do not nest."""
        lines = self.display_source().splitlines()
        found: list[Segment] = []
        region: str | None = None
        start = 0
        for end, line in enumerate([*lines, ""]):
            opening = _REGION.match(line) if region is None else None
            if end == len(lines) or opening or (region is not None and _END_REGION.match(line)):
                if any(x.strip() for x in lines[start:end]):
                    found.append(Segment("\n".join(lines[start:end]).strip("\n"), region))
                start, region = end + 1, (opening.group("name") or "setup") if opening else None
        return found


#: The folding comments editors understand (VS Code, PyCharm), each on a line of its own.
_REGION = re.compile(r"^[ \t]*#[ \t]*region\b[ \t]*(?P<name>.*?)[ \t]*$")
_END_REGION = re.compile(r"^[ \t]*#[ \t]*endregion\b.*$")


@dataclass(frozen=True)
class Segment:
    """A run of shown code: the example's own lines, or a region a page folds to its name."""

    code: str  #: the lines, without the region's marker comments
    region: str | None = None  #: the region's name; None for the example's own lines

    @property
    def lines(self) -> int:
        return len(self.code.splitlines())


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@functools.lru_cache(maxsize=1024)  # a build asks for each snippet's once per page and target
def code_sha256(source: bytes) -> str:
    """The freshness key: the sha256 of the syntax tree without comments, docstrings (unless read
    as ``__doc__``) or layout, so an edit that cannot change what runs keeps recordings fresh (a GPU
    machine is rare); without empty fields, the same on every Python (3.12 adds ``type_params``)."""
    text = source.decode("utf-8", errors="replace").replace("\r\n", "\n")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return hashlib.sha256(b"text\n" + _without_comments(text).encode("utf-8")).hexdigest()
    names = ((getattr(n, "id", None), getattr(n, "attr", None)) for n in ast.walk(tree))  # Name, Attribute
    if "__doc__" not in text or not any("__doc__" in name for name in names):
        for node in ast.walk(tree):
            if isinstance(node, _DOCUMENTED) and ast.get_docstring(node, clean=False) is not None:
                del node.body[0]
    return hashlib.sha256(b"ast\n" + _written(tree).encode("utf-8")).hexdigest()


def _written(node: object) -> str:
    """A tree as text: each node's type, then its non-empty fields; constants by their repr,
    which tells 1, 1.0 and True apart."""
    if isinstance(node, list):
        return "[" + ",".join(map(_written, node)) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(node, ast.JoinedStr) and name == "values":
            value = _f_string_parts(node.values)
        if value is not None and value != []:
            fields.append(f"{name}={_written(value)}")
    return f"{type(node).__name__}({','.join(fields)})"


def _f_string_parts(values: list[ast.expr]) -> list[ast.expr]:
    """An f-string's parts with adjacent text joined and empty text left out, as 3.11 and
    3.13 parse them (3.12.1 adds an empty part after a nested format field)."""
    parts: list[ast.expr] = []
    for value in values:
        text = _text(value)
        if text and parts and (before := _text(parts[-1])) is not None:
            parts[-1] = ast.Constant(before + text)
        elif text != "":
            parts.append(value)
    return parts


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def comment_free_sha256(source: bytes) -> str:
    """Schema 2's freshness key (of the code without comments), for ``recording.migrate``."""
    text = source.decode("utf-8", errors="replace").replace("\r\n", "\n")
    return hashlib.sha256(_without_comments(text).encode("utf-8")).hexdigest()


def _without_comments(text: str) -> str:
    """The text without blank lines, trailing spaces or comments (tokens: a ``#`` in a string stays)."""
    lines = text.split("\n")
    try:
        comments = [
            token.start
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        comments = []
    for row, column in reversed(comments):
        lines[row - 1] = lines[row - 1][:column]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def _metadata_blocks(source: str) -> list[re.Match[str]]:
    return [m for m in _METADATA.finditer(source) if m.group("type") == "script"]


def parse_metadata(source: str, where: str = "snippet") -> dict:
    """The ``script`` metadata block as a dict, or {} when there is none."""
    blocks = _metadata_blocks(source)
    if len(blocks) > 1:
        raise SnippetError(f"{where}: more than one '# /// script' block; keep one.")
    if not blocks:
        return {}
    try:
        return tomllib.loads(re.sub(r"(?m)^# ?", "", blocks[0].group("content")))
    except tomllib.TOMLDecodeError as exc:
        raise SnippetError(f"{where}: the '# /// script' block is not valid TOML: {exc}") from None


def strip_metadata(source: str) -> str:
    for m in reversed(_metadata_blocks(source)):
        source = source[: m.start()] + source[m.end() :]
    return source.lstrip("\n")


def load(snippets_dir: Path, name: str, known: Targets | None = None) -> Snippet:
    """One snippet by its name under snippets_dir, refusing paths that leave it; its ``requires``
    must be drawn from what the ``known`` targets (by default the project's) provide."""
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise SnippetError(
            f"{name!r}: name a file under snippets/ with a relative path, such as 'my_lesson/01_intro.py'."
        )
    if pure.suffix != ".py":
        raise SnippetError(f"{name!r}: snippets are Python files ending in .py.")
    path = snippets_dir.joinpath(*pure.parts)
    # A link inside snippets/ must not lead the recorder or the pages outside it.
    if path.exists() and not path.resolve().is_relative_to(snippets_dir.resolve()):
        raise SnippetError(f"{name!r}: resolves outside {snippets_dir}; snippets must live inside it.")
    if not path.is_file():
        raise SnippetError(f"{name!r}: no such snippet in {snippets_dir}.")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise SnippetError(f"{pure}: cannot be read ({why}); snippets are UTF-8 Python files.") from None
    metadata = parse_metadata(source, where=str(pure))
    needs = metadata.get("dependencies", [])
    if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
        raise SnippetError(
            f'{pure}: its header\'s dependencies must be a list of strings, such as ["torch"].'
        )
    tool = metadata.get("tool", {})
    if isinstance(tool, dict) and "record-runs" in tool:
        raise SnippetError(f"{pure}: its header's [tool.record-runs] is now [tool.{TOOL}]: rename it.")
    tool = tool.get(TOOL, {}) if isinstance(tool, dict) else tool
    known = known or targets_.load(snippets_dir.parent)
    if not isinstance(tool, dict):
        # The example names something this project's targets really provide.
        example = min(known.capabilities - {"cpu"} or known.capabilities or {"cpu"})
        raise SnippetError(
            f"{pure}: [tool.recorded] must be a table: a '# [tool.recorded]' line, "
            f"then its keys, such as '# requires = [\"{example}\"]'."
        )
    if unknown := set(tool) - _TOOL_KEYS:
        raise SnippetError(
            f"{pure}: unknown key(s) {sorted(unknown)} under [tool.recorded]; "
            f"known keys are {sorted(_TOOL_KEYS)}."
        )
    requires = tool.get("requires", [])
    listed = isinstance(requires, list) and all(isinstance(r, str) for r in requires)  # hashable, for set()
    if not listed or not set(requires) <= known.capabilities:
        raise SnippetError(
            f"{pure}: [tool.recorded] requires must be a list drawn from "
            f"{sorted(known.capabilities)} (what the targets {list(known.names)} provide), "
            f"got {requires!r}."
        )
    timeout = tool.get("timeout")
    if timeout is not None and (type(timeout) not in (int, float) or timeout <= 0):  # True is not a timeout
        raise SnippetError(f"{pure}: [tool.recorded] timeout must be a positive number of seconds.")
    if not isinstance(timing := tool.get("timing", False), bool):
        raise SnippetError(f"{pure}: [tool.recorded] timing must be true or false, got {timing!r}.")
    seconds = None if timeout is None else float(timeout)
    return Snippet(str(pure), path, frozenset(requires), seconds, timing, tuple(needs))


def discover(
    snippets_dir: Path, known: Targets | None = None, problems: list[str] | None = None
) -> list[Snippet]:
    """Every snippet under snippets_dir, sorted by name. A file that is not a usable snippet
    raises SnippetError, or with a ``problems`` list is left out and said there."""
    known = known or targets_.load(snippets_dir.parent)
    found = []
    paths = (p for p in snippets_dir.rglob("*.py") if "__pycache__" not in p.parts)
    for name in sorted(p.relative_to(snippets_dir).as_posix() for p in paths):
        try:
            found.append(load(snippets_dir, name, known))
        except SnippetError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
    return found
