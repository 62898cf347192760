"""The project's settings for the recorder, under ``[tool.recorded]`` beside its targets::

    [tool.recorded]
    runs = 3      # fresh runs of each timing snippet (timing = true), each in a fresh process
    memory-gib = 8        # the most memory one run may take (its private writable memory)
    file-size-mib = 1024  # the largest file one run may write
    # The commands a message names to fix what it found, as this project spells them, the one
    # form that works from a fresh clone: `all` records what is missing or stale here and
    # redraws everything made from the recordings; `one` records a snippet on a target.
    commands = { all = "make record", one = "make record TARGET={target} SNIPPETS={snippet}" }

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import schema, tool_table
from .schema import Key

CONFIG_FILE = schema.CONFIG_FILE
#: The most fresh runs a recording may hold: enough to see the spread between runs, and a
#: bound on what a bundle may carry.
MAX_RUNS = 20


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
    "commands": Key("a table of all and one, both strings", table=_COMMANDS),
    "runs": Key(
        f"a whole number of fresh runs from 1 to {MAX_RUNS}",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_RUNS,
        default=3,
    ),
    "memory-gib": Key("a positive number of GiB", _positive, default=8),
    "file-size-mib": Key("a positive number of MiB", _positive, default=1024),
}


@dataclass(frozen=True)
class Commands:
    """The commands a message names to fix what it found: built here and nowhere else."""

    all: str = _COMMANDS["all"].default
    one: str = _COMMANDS["one"].default

    def record(self, snippet: str | None = None, target: str | None = None) -> str:
        """The command that records ``snippet`` on ``target``; without them, everything."""
        if snippet is None or target is None:
            return self.all
        return self.one.replace("{target}", target).replace("{snippet}", snippet)


@dataclass(frozen=True)
class Settings:
    #: How many times the recorder runs a timing snippet, each time in a fresh process: the
    #: spread between runs, which no single process shows (as pyperf's worker processes).
    runs: int = 3
    commands: Commands = Commands()
    #: What one run may take, in the sandbox or not (recorder/sandbox.py's Limits).
    memory_gib: float = 8
    file_size_mib: float = 1024


def parse(config: dict, where: str = CONFIG_FILE) -> Settings:
    table = tool_table(config, where)
    mine = {k: v for k, v in table.items() if k in SCHEMA}
    values = schema.validate(SCHEMA, mine, where, "tool.recorded")
    commands = values["commands"] or {}
    return Settings(
        runs=values["runs"],
        commands=Commands(**{k: v for k, v in commands.items() if v}),
        memory_gib=values["memory-gib"],
        file_size_mib=values["file-size-mib"],
    )


def load(root: Path) -> Settings:
    config = schema.read_project(root)
    return Settings() if config is None else parse(config)
