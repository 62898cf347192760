"""A recording: what one snippet printed on one target, with every fresh run, the machine it
ran on and the code it ran; its schema, the migration of older ones, and the strict JSON it
is read from. Standard library only."""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import NoReturn

from ..config.targets import Targets
from .escape import visible as escape_visible
from .machines import Machine
from .snippets import code_sha256, comment_free_sha256

SCHEMA_VERSION = 3
_RECORDED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class Ending(enum.StrEnum):
    """How a run ended: a recording's and a run's ``status``, stored as its value."""

    OK = "ok"
    ERROR = "error"  # raised or exited non-zero
    TIMEOUT = "timeout"


class RecordingError(ValueError):
    """A recording file that cannot be used; the message names it and says what to do."""


@dataclass
class Run:
    """One fresh run of a snippet: what it printed, how long it took, how busy the machine was."""

    stdout: list[str]
    duration_s: float
    busy: dict | None = None


@dataclass
class Recording:
    snippet: str
    target: str
    sha256: str  #: of the snippet's bytes as they ran
    status: Ending
    exit_code: int | None
    stdout: list[str]
    stderr: list[str]
    duration_s: float
    recorded_at: str  # UTC, ISO 8601
    machine: Machine = field(default_factory=Machine)
    schema: int = SCHEMA_VERSION
    #: How busy the machine was around a timing snippet's run (``busy.py``); None if not measured.
    busy: dict | None = None
    #: The freshness key of the code that ran (``snippets.code_sha256``); empty where unknown
    #: (an older recording of other code): then only ``sha256`` can make it fresh.
    code_sha256: str = ""
    #: A timing snippet's fresh runs after the first (stored as ``runs``); ``runs`` gives every run.
    later_runs: list[Run] = field(default_factory=list)
    code: str = ""  #: the source as it ran, so a stale recording says what changed; "" if unknown

    def __post_init__(self) -> None:
        if not isinstance(self.machine, Machine):  # a stored block, as read from JSON
            self.machine = Machine(self.machine)
        self.status = Ending(self.status)

    @property
    def ok(self) -> bool:
        return self.status is Ending.OK

    @property
    def runs(self) -> list[Run]:
        """Every fresh run, the shown one first."""
        return [Run(self.stdout, self.duration_s, self.busy), *self.later_runs]

    @property
    def outputs(self) -> list[list[str]]:
        """What every fresh run printed, the shown one first."""
        return [run.stdout for run in self.runs]

    def of(self, snippet) -> bool:
        """Whether it was made from the snippet's code as it is now: the same bytes or syntax tree."""
        if self.sha256 == snippet.sha256():
            return True
        return bool(self.code_sha256) and self.code_sha256 == snippet.code_sha256()

    def to_json(self) -> str:
        """The recording as it is stored, its fields in their order."""
        data = {_STORED.get(name, name): getattr(self, name) for name in self.__dataclass_fields__}
        data.update(machine=dict(self.machine), runs=[asdict(run) for run in self.later_runs])
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: object, where: str, known: Targets | None = None) -> Recording:
        def refuse(why: str) -> NoReturn:
            raise RecordingError(f"{where}: {why}")

        if not isinstance(data, dict):
            refuse("expected a JSON object.")
        if data.get("schema") != SCHEMA_VERSION:
            refuse(f"schema version {data.get('schema')!r}, this project reads {SCHEMA_VERSION}.")
        for key, kind in _TYPES.items():
            if not isinstance(data.get(key), kind):
                refuse(f"field {key!r} is missing or of the wrong type.")
        if data["status"] not in list(Ending):
            refuse(f"status {data['status']!r} is not one of {tuple(map(str, Ending))}.")
        if known is not None and data["target"] not in known:
            refuse(
                f"target {data['target']!r} is not one of the targets {list(known.names)} "
                f"(declared in {known.source})."
            )
        if not all(isinstance(x, str) for x in data["stdout"] + data["stderr"]):
            refuse("stdout and stderr must be lists of strings.")
        # Shown on pages as they are: a date and hashes, never free text.
        if not _RECORDED_AT.fullmatch(data["recorded_at"]):
            refuse(f"recorded_at {data['recorded_at']!r} is not a UTC time such as 2026-01-02T03:04:05Z.")
        for key in ("sha256", "code_sha256"):
            if not _SHA256.fullmatch(data[key]) and not (key == "code_sha256" and data[key] == ""):
                refuse(f"{key} {data[key]!r} is not 64 lowercase hex digits.")
        for n, run in enumerate(data["runs"], 2):
            if not _is_run(run):
                refuse(f"run {n} must hold stdout (a list of strings), duration_s and busy.")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**fields, later_runs=[Run(**run) for run in data["runs"]])


_TYPES: dict[str, type | tuple[type, ...]] = {
    **dict.fromkeys(["snippet", "target", "sha256", "code_sha256", "status"], str),
    **dict.fromkeys(["stdout", "stderr"], list),
    "duration_s": (int, float),
    "recorded_at": str,
    "machine": dict,
    "runs": list,
    "code": str,
}


def _is_run(run: object) -> bool:
    return (
        isinstance(run, dict)
        and set(run) == set(Run.__dataclass_fields__)
        and isinstance(run["stdout"], list)
        and all(isinstance(x, str) for x in run["stdout"])
        and type(run["duration_s"]) in (int, float)  # not a bool
        and (run["busy"] is None or isinstance(run["busy"], dict))
    )


def migrate(data: object, source: Callable[[str], bytes | None]) -> object:
    """An older recording brought up to SCHEMA_VERSION; ``source(name)``: a snippet's bytes now,
    or None. One that was fresh gets the snippet's key (1 -> 2: of the code without comments;
    2 -> 3: of its syntax tree) and its code now (the same but for comments); a stale one, neither."""
    if not isinstance(data, dict) or data.get("schema") == SCHEMA_VERSION:
        return data
    data = dict(data)
    now = source(name) if isinstance(name := data.get("snippet"), str) else None
    same_bytes = now is not None and hashlib.sha256(now).hexdigest() == data.get("sha256")
    if data.get("schema") == 1:
        fresh_key = comment_free_sha256(now) if same_bytes and now is not None else ""
        data.update(code_sha256=fresh_key, runs=[], schema=2)
    if data.get("schema") == 2:
        key = data.get("code_sha256")
        if now is not None and (same_bytes or (bool(key) and key == comment_free_sha256(now))):
            data.update(code_sha256=code_sha256(now), code=now.decode("utf-8", errors="replace"))
        else:
            data.update(code_sha256="", code="")
        data["schema"] = 3
    return data


class JSONRefused(ValueError):
    """JSON that a recording or a bundle may not hold, though Python's reader would take it."""


def _pairs(pairs: list[tuple[str, object]]) -> dict:
    found = dict(pairs)
    if len(found) != len(pairs):
        twice = next(k for n, (k, _) in enumerate(pairs) if k in dict(pairs[:n]))
        raise JSONRefused(f"the key {escape_visible(twice)!r} appears twice in one object")
    return found


def _number(text: str) -> float:
    if not math.isfinite(value := float(text)):
        raise JSONRefused(f"the number {text[:20]} is beyond what a float holds")
    return value


def _integer(text: str) -> int:
    if len(text) > 30:
        raise JSONRefused(f"an integer of {len(text)} digits")
    return int(text)


def _constant(name: str) -> float:
    raise JSONRefused(f"{name} is not a number JSON holds")


def read_json(text: str) -> object:
    """JSON as strict as a recording needs: no duplicate keys (json keeps the last silently),
    no NaN or Infinity, no number beyond a float or of more than 30 digits (JSONRefused)."""
    return json.loads(
        text, object_pairs_hook=_pairs, parse_float=_number, parse_int=_integer, parse_constant=_constant
    )


_STORED = {"later_runs": "runs"}  #: the fields stored under another key
#: The keys of a stored recording, in the order they are written.
RECORDING_FIELDS = tuple(_STORED.get(name, name) for name in Recording.__dataclass_fields__)


def utc_stamp(when: dt.datetime | None = None) -> str:
    """A moment as recordings and bundles write it: UTC, to the second, ``...Z``."""
    return (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
