"""The recording store: one JSON file per snippet per target, and the state of each.

Standard library only. Files are written atomically, so a reader never sees half a
recording, and a failed run never replaces a good one (that rule lives in ``record``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import enum
import fcntl
import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import settings as settings_
from ..config import targets as targets_
from ..config.targets import Targets
from .escape import visible as escape_visible
from .machines import Machine
from .snippets import Snippet, code_sha256, comment_free_sha256

SCHEMA_VERSION = 3
_RECORDED_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_SHA256 = re.compile(r"[0-9a-f]{64}")
STATUSES = ("ok", "error", "timeout")


@dataclass(frozen=True)
class Status:
    """Where one snippet stands on one target: the store's answer, the recorder's plan, the
    pages' tabs and the inventory all use this one shape."""

    snippet: Snippet
    target: str
    state: State
    recording: Recording | None
    reason: str = ""  #: why it is not fresh, in words

    @property
    def last_duration(self) -> float | None:
        """How long its last recording took, every fresh run together."""
        rec = self.recording
        return rec.duration_s + sum(run.duration_s for run in rec.runs) if rec else None


class RecordingError(ValueError):
    """A recording file that cannot be used; the message names it and says what to do."""


class State(str, enum.Enum):
    FRESH = "fresh"
    STALE = "stale"  # recorded with an earlier version of the snippet's code: shown, and labelled so
    FAILED = "failed"  # the last run raised, exited non-zero or timed out
    MISSING = "missing"
    INVALID = "invalid"  # the file exists but cannot be read as a recording
    NOT_APPLICABLE = "not applicable"  # the snippet needs hardware the target lacks


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


class Store:
    """Where the snippets and their recordings live, and how to read and write them."""

    def __init__(self, root: Path, recordings_dir: Path | None = None, targets: Targets | None = None):
        self.root = Path(root)
        self.snippets_dir = self.root / "snippets"
        self.recordings_dir = Path(recordings_dir) if recordings_dir else self.root / "recordings"
        #: The project's targets, from its pyproject.toml (raises TargetError if malformed).
        self.targets = targets or targets_.load(self.root)
        #: Its settings: fresh runs, and the commands its messages name.
        self.settings = settings_.load(self.root)

    def path(self, snippet_name: str, target: str) -> Path:
        return self.recordings_dir / target / Path(snippet_name).with_suffix(".json")

    def load(self, path: Path) -> Recording:
        where = self.shown(path)
        hint = f"delete the file, then run `{self.settings.commands.record()}`."
        if linked := self.linked(path):
            raise RecordingError(
                f"{self.shown(linked)}: is a symbolic link; recordings are files in the tree, "
                f"so nothing is read through it. Fix: delete the link, then run `{self.settings.commands.record()}`."
            )
        try:
            data = read_json(path.read_text(encoding="utf-8"))
        except RecursionError:
            raise RecordingError(
                f"{where}: its JSON is nested too deeply to be a recording. Fix: {hint}"
            ) from None
        except OSError as exc:
            raise RecordingError(f"{where}: cannot be read ({exc.strerror or exc}). Fix: {hint}") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise RecordingError(f"{where}: not a readable JSON recording ({exc}). Fix: {hint}") from None
        try:
            return Recording.from_dict(migrate(data, self.source), where, self.targets)
        except RecordingError as exc:
            raise RecordingError(f"{exc} Fix: {hint}") from None

    def source(self, name: str) -> bytes | None:
        """A snippet's bytes as they are now, by its name under snippets/; None if there is none."""
        path = self.snippets_dir / name
        try:
            if path.resolve().is_relative_to(self.snippets_dir.resolve()) and path.is_file():
                return path.read_bytes()
        except OSError:
            pass
        return None

    def linked(self, path: Path) -> Path | None:
        """The first symbolic link on the way from the store's folder (itself included) down
        to ``path``; None when there is none."""
        top = self.recordings_dir
        try:
            parts = Path(path).relative_to(top).parts
        except ValueError:
            return None
        here = top
        for part in ("", *parts):
            here = here / part if part else here
            if here.is_symlink():
                return here
        return None

    def read(self, snippet_name: str, target: str) -> Recording | None:
        path = self.path(snippet_name, target)
        if not path.exists() and not path.is_symlink():
            return None
        rec = self.load(path)
        if (rec.snippet, rec.target) != (snippet_name, target):
            raise RecordingError(
                f"{self.shown(path)}: holds {rec.snippet} on {rec.target}, but its place says "
                f"{snippet_name} on {target}; delete it and run "
                f"`{self.settings.commands.record(snippet_name, target)}`."
            )
        return rec

    def write(self, rec: Recording) -> Path:
        """Write atomically: a temporary file in the same folder, then a rename."""
        path = self.path(rec.snippet, rec.target)
        write_atomically(path, rec.to_json())
        return path

    def status(self, snippet: Snippet, target: str) -> Status:
        """Where one snippet stands on one target: its state, its recording if readable, and why."""

        def said(state: State, rec: Recording | None = None, why: str = "") -> Status:
            return Status(snippet, target, state, rec, why)

        if not snippet.runs_on(self.targets.get(target)):
            return said(State.NOT_APPLICABLE, None, f"needs {', '.join(sorted(snippet.requires))}")
        try:
            rec = self.read(snippet.name, target)
        except RecordingError as exc:
            return said(State.INVALID, None, str(exc))
        if rec is None:
            return said(State.MISSING, None, "not recorded yet")
        if not rec.of(snippet):
            return said(State.STALE, rec, "recorded with an earlier version of its code")
        if not rec.ok:
            return said(State.FAILED, rec, f"the last run ended with status {rec.status}")
        return said(State.FRESH, rec)

    def orphans(self) -> list[Path]:
        """Recording files that belong to no snippet and target: left over from a snippet
        renamed or deleted, or a target no longer declared."""
        names = [p.relative_to(self.snippets_dir).as_posix() for p in self.snippets_dir.rglob("*.py")]
        expected = {self.path(name, t) for name in names for t in self.targets.names}
        return [p for p in self.recording_files() if p not in expected]

    def recording_files(self) -> list[Path]:
        return sorted(p for p in self.recordings_dir.glob("*/**/*.json"))

    def shown(self, path: Path) -> str:
        """A path as the user reads it: relative to the project when it is inside it."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)


def utc_stamp(when: dt.datetime | None = None) -> str:
    """A moment as recordings and bundles write it: UTC, to the second, ``...Z``."""
    moment = (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


class WriteFailed(OSError):
    """A file could not be written (a full disk, a file-size limit, no permission); the one
    there before is unchanged. The message names the file and the cause."""


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and put back at once
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Write text to path through a temporary file in the same folder and a rename, so a
    reader sees the old file or the new one, never half of one. The file gets the
    permissions any new file gets here (0666 less the umask), as ``open`` would give it.
    WriteFailed, naming the file and the cause, if it cannot be written."""
    path = Path(path)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise WriteFailed(
            f"{path}: could not be written ({exc.strerror or exc}); the file there before, if any, is unchanged."
        ) from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def locked(folder: Path, what: str, wait_s: float = 600.0, say=None) -> Iterator[None]:
    """Hold the lock of a recording store while its recordings are checked and written, so
    two recorders or imports at once take turns instead of interleaving. A second one says
    it waits, and gives up after ``wait_s`` seconds with WriteFailed. The lock is taken on
    the folder that holds the store (the project, for recordings/), which exists before the
    store does: nothing is created to take it."""
    holder = Path(folder).resolve().parent
    while not holder.is_dir():  # --out new/folder: its nearest existing parent
        holder = holder.parent
    fd = os.open(holder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if say:
                say(f"waiting: another recorder or import is writing in {holder} ({what} goes next)")
            deadline = time.monotonic() + wait_s
            while True:
                time.sleep(0.2)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise WriteFailed(
                            f"{folder}: another recorder or import held it for {wait_s:g} s; "
                            "nothing was written. Run again once it has finished."
                        ) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def this_python(root: Path) -> str:
    """The running interpreter as a contributor would type it from the project folder:
    ``.venv/bin/python`` rather than a bare ``python`` that may lack torch and numpy."""
    try:
        return Path(sys.executable).relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return "python"
