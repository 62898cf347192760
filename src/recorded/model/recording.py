"""A recording: what one snippet printed on one target, with every fresh run, the machine it
ran on and the code it ran; its schema, the migration of older ones, and the strict JSON it
is read from.

Standard library only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..config.targets import Targets
from .escape import visible as escape_visible
from .machines import Machine
from .snippets import code_sha256, comment_free_sha256

SCHEMA_VERSION = 3
_RECORDED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_SHA256 = re.compile(r"[0-9a-f]{64}")
STATUSES = ("ok", "error", "timeout")


class RecordingError(ValueError):
    """A recording file that cannot be used; the message names it and says what to do."""


@dataclass
class Run:
    """One more fresh run of a timing snippet, beside the one its recording shows: what it
    printed (its verdict lines are counted), how long it took and how busy the machine was."""

    stdout: list[str]
    duration_s: float
    busy: dict | None = None


@dataclass
class Recording:
    snippet: str
    target: str
    sha256: str  #: of the snippet's bytes as they ran
    status: str
    exit_code: int | None
    stdout: list[str]
    stderr: list[str]
    duration_s: float
    recorded_at: str  # UTC, ISO 8601
    machine: Machine = field(default_factory=Machine)
    schema: int = SCHEMA_VERSION
    #: How busy the machine was around a timing snippet's run (see ``busy.py``); None for
    #: snippets that time nothing, and in recordings made before it was measured.
    busy: dict | None = None
    #: The freshness key of the code that ran (``snippets.code_sha256``, its syntax tree
    #: without comments, docstrings or layout). Empty where it is not known (an older
    #: recording of other code than the snippet has now): then only ``sha256`` can make it fresh.
    code_sha256: str = ""
    #: A timing snippet's further fresh runs, each in a fresh process; the recording's own
    #: stdout is the first. Empty for a snippet run once.
    runs: list[Run] = field(default_factory=list)
    #: The snippet's source as it ran, so that a recording of an earlier version says what
    #: changed since; empty where it is not known (an older recording already stale).
    code: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.machine, Machine):  # a stored block, as read from JSON
            self.machine = Machine(self.machine)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def outputs(self) -> list[list[str]]:
        """What every fresh run printed, the shown one first."""
        return [self.stdout] + [r.stdout for r in self.runs]

    def of(self, snippet) -> bool:
        """Whether this recording was made from the snippet's code as it is now: from these
        very bytes, or from code whose syntax tree is the same (parsed only when the bytes differ)."""
        if self.sha256 == snippet.sha256():
            return True
        return bool(self.code_sha256) and self.code_sha256 == snippet.code_sha256()

    def to_dict(self) -> dict:
        """The recording as it is stored, its fields in their order."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["machine"] = dict(self.machine)
        data["runs"] = [asdict(run) for run in self.runs]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: object, where: str, known: Targets | None = None) -> Recording:
        if not isinstance(data, dict):
            raise RecordingError(f"{where}: expected a JSON object.")
        if data.get("schema") != SCHEMA_VERSION:
            raise RecordingError(
                f"{where}: schema version {data.get('schema')!r}, this project reads {SCHEMA_VERSION}."
            )
        expected: dict[str, type | tuple[type, ...]] = {
            "snippet": str,
            "target": str,
            "sha256": str,
            "code_sha256": str,
            "status": str,
            "stdout": list,
            "stderr": list,
            "duration_s": (int, float),
            "recorded_at": str,
            "machine": dict,
            "runs": list,
            "code": str,
        }
        for key, kind in expected.items():
            if not isinstance(data.get(key), kind):
                raise RecordingError(f"{where}: field {key!r} is missing or of the wrong type.")
        if data["status"] not in STATUSES:
            raise RecordingError(f"{where}: status {data['status']!r} is not one of {STATUSES}.")
        if known is not None and data["target"] not in known:
            raise RecordingError(
                f"{where}: target {data['target']!r} is not one of the targets "
                f"{list(known.names)} (declared in {known.source})."
            )
        if not all(isinstance(x, str) for x in data["stdout"] + data["stderr"]):
            raise RecordingError(f"{where}: stdout and stderr must be lists of strings.")
        # Shown on pages as they are: a date and hashes, never free text.
        if not _RECORDED_AT.fullmatch(data["recorded_at"]):
            raise RecordingError(
                f"{where}: recorded_at {data['recorded_at']!r} is not a UTC time such as 2026-01-02T03:04:05Z."
            )
        for key in ("sha256", "code_sha256"):
            if not _SHA256.fullmatch(data[key]) and not (key == "code_sha256" and data[key] == ""):
                raise RecordingError(f"{where}: {key} {data[key]!r} is not 64 lowercase hex digits.")
        runs = []
        for n, run in enumerate(data["runs"], 2):
            if not (
                isinstance(run, dict)
                and set(run) == set(Run.__dataclass_fields__)
                and isinstance(run["stdout"], list)
                and all(isinstance(x, str) for x in run["stdout"])
                and isinstance(run["duration_s"], (int, float))
                and not isinstance(run["duration_s"], bool)
                and (run["busy"] is None or isinstance(run["busy"], dict))
            ):
                raise RecordingError(
                    f"{where}: run {n} must hold stdout (a list of strings), duration_s and busy."
                )
            runs.append(Run(**run))
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in names and k != "runs"}, runs=runs)


def migrate(data: object, source: Callable[[str], bytes | None]) -> object:
    """A stored recording of any older schema, brought up to SCHEMA_VERSION (as asv upgrades
    its results files): the one place older recordings are read. ``source(name)`` gives a
    snippet's bytes as they are now, or None.

    1 -> 2: the freshness key, ``code_sha256``, is the key of the snippet as it is now if the
    recording was made from exactly these bytes (it was fresh), else unknown (it stays
    stale); ``runs`` is empty (one run).
    2 -> 3: the key becomes the syntax tree's (comments, docstrings and layout left out) and
    the recording keeps the code it ran: for a recording that was fresh, the snippet as it is
    now, which differs from what ran in comments at most; for a stale one, unknown.
    """
    if not isinstance(data, dict) or data.get("schema") == SCHEMA_VERSION:
        return data
    data = dict(data)
    name = data.get("snippet")
    now = source(name) if isinstance(name, str) else None
    if data.get("schema") == 1:
        fresh = now is not None and hashlib.sha256(now).hexdigest() == data.get("sha256")
        data["code_sha256"] = comment_free_sha256(now) if fresh and now is not None else ""
        data["runs"] = []
        data["schema"] = 2
    if data.get("schema") == 2:
        key = data.get("code_sha256")
        fresh = now is not None and (
            (bool(key) and key == comment_free_sha256(now))
            or hashlib.sha256(now).hexdigest() == data.get("sha256")
        )
        data["code_sha256"] = code_sha256(now) if fresh and now is not None else ""
        data["code"] = now.decode("utf-8", errors="replace") if fresh and now is not None else ""
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
    value = float(text)
    if not math.isfinite(value):
        raise JSONRefused(f"the number {text[:20]} is beyond what a float holds")
    return value


def _integer(text: str) -> int:
    if len(text) > 30:
        raise JSONRefused(f"an integer of {len(text)} digits")
    return int(text)


def _constant(name: str) -> float:
    raise JSONRefused(f"{name} is not a number JSON holds")


def read_json(text: str) -> object:
    """JSON as strict as a recording needs: no duplicate keys (the reader would keep the last
    one silently), no NaN or Infinity, no number beyond a float or of more than 30 digits.
    JSONRefused (a ValueError) says which; json's own errors as json raises them."""
    return json.loads(
        text, object_pairs_hook=_pairs, parse_float=_number, parse_int=_integer, parse_constant=_constant
    )


#: The keys of a stored recording, in the order they are written.
RECORDING_FIELDS = tuple(Recording.__dataclass_fields__)


def utc_stamp(when: dt.datetime | None = None) -> str:
    """A moment as recordings and bundles write it: UTC, to the second, ``...Z``."""
    moment = (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
