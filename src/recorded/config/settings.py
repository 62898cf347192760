"""The project's settings for the recorder, under ``[tool.recorded]`` beside its targets::

    [tool.recorded]
    runs = 3      # fresh runs of each timing snippet (timing = true), each in a fresh process

Standard library only.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import schema, tool_table
from .schema import Key

CONFIG_FILE = "pyproject.toml"
#: The most fresh runs a recording may hold: enough to see the spread between runs, and a
#: bound on what a bundle may carry.
MAX_RUNS = 20
SCHEMA = {
    "runs": Key(
        f"a whole number of fresh runs from 1 to {MAX_RUNS}",
        lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_RUNS,
        default=3,
    ),
}


@dataclass(frozen=True)
class Settings:
    #: How many times the recorder runs a timing snippet, each time in a fresh process: the
    #: spread between runs, which no single process shows (as pyperf's worker processes).
    runs: int = 3


def parse(config: dict, where: str = CONFIG_FILE) -> Settings:
    table = tool_table(config, where)
    mine = {k: v for k, v in table.items() if k in SCHEMA}
    values = schema.validate(SCHEMA, mine, where, "tool.recorded")
    return Settings(runs=values["runs"])


def load(root: Path) -> Settings:
    path = Path(root) / CONFIG_FILE
    try:
        return parse(tomllib.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return Settings()
    except tomllib.TOMLDecodeError as exc:
        raise schema.ConfigError(f"{CONFIG_FILE}: not valid TOML ({exc}).") from None
