"""The project's settings for the recorder, under ``[tool.recorded]`` beside its targets: fresh
``runs`` per timing snippet, the memory and file size one run may take, and the ``commands`` a
message names to fix what it found, spelled as they work from a fresh clone."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import schema, tool_table
from .schema import Key

#: The most fresh runs a recording may hold: enough to see their spread, a bound on a bundle's size.
MAX_RUNS = 20


def switched_on(value: str) -> bool:
    """Whether an environment variable's text turns a setting on, the one reading of it."""
    return value.strip().lower() in ("1", "true", "yes", "on")


def _positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


_COMMANDS = {
    "all": Key("a command, as a contributor types it", schema.text, default="python -m recorded"),
    "one": Key(
        "a command with {target} and {snippet} in it",
        lambda v: schema.text(v) and "{target}" in v and "{snippet}" in v,
        default="python -m recorded --target {target} {snippet}",
    ),
}
SCHEMA = {
    "commands": Key(
        "a table of all and one, both strings",
        table=_COMMANDS,
        default={name: key.default for name, key in _COMMANDS.items()},
    ),
    "runs": Key(
        f"a whole number of fresh runs from 1 to {MAX_RUNS}",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_RUNS,
        default=3,
    ),
    "memory-gib": Key("a positive number of GiB", _positive, default=8),  # private writable memory
    "file-size-mib": Key("a positive number of MiB", _positive, default=1024),  # the largest file written
}


@dataclass(frozen=True)
class Commands:
    """``all``: record what is missing or stale, redraw what is made of it; ``one``: a snippet on a target."""

    all: str
    one: str

    def record(self, snippet: str | None = None, target: str | None = None) -> str:
        """The command that records ``snippet`` on ``target``; without them, everything."""
        if snippet is None or target is None:
            return self.all
        return self.one.replace("{target}", target).replace("{snippet}", snippet)


@dataclass(frozen=True)
class Settings:
    runs: int  #: fresh processes per timing snippet: the spread between runs no single process shows
    commands: Commands
    memory_gib: float
    file_size_mib: float


def load(root: Path) -> Settings:
    where = schema.CONFIG_FILE
    mine = {k: v for k, v in tool_table(schema.read_project(root), where).items() if k in SCHEMA}
    v = schema.validate(SCHEMA, mine, where, "tool.recorded")
    return Settings(v["runs"], Commands(**v["commands"]), v["memory-gib"], v["file-size-mib"])
