"""The recording store: one JSON file per snippet per target, and the state of each.
Standard library only; files are written atomically (files.py)."""

from __future__ import annotations

import contextlib
import enum
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

from ..config import settings as settings_
from ..config import targets as targets_
from ..config.targets import Target, Targets
from .files import write_atomically
from .recording import Recording, RecordingError, migrate, read_json
from .snippets import Snippet


@dataclass(frozen=True)
class Standing:
    """Where one snippet stands on one target: for the recorder's plan, the pages and the inventory."""

    snippet: Snippet
    target: Target
    state: State
    recording: Recording | None
    reason: str = ""  #: why it is not fresh, in words

    @property
    def last_duration(self) -> float | None:
        """How long its last recording took, every fresh run together."""
        return sum(run.duration_s for run in self.recording.runs) if self.recording else None


class State(str, enum.Enum):
    FRESH = "fresh"
    STALE = "stale"  # recorded with an earlier version of the snippet's code: shown, and labelled so
    FAILED = "failed"  # the last run raised, exited non-zero or timed out
    MISSING = "missing"
    INVALID = "invalid"  # the file exists but cannot be read as a recording
    NOT_APPLICABLE = "not applicable"  # the snippet needs hardware the target lacks


#: The states whose recording's output the pages show and the claims must hold in.
WITH_OUTPUT = (State.FRESH, State.STALE)


class Store:
    def __init__(self, root: Path, recordings_dir: Path | None = None, targets: Targets | None = None):
        self.root = Path(root)
        self.snippets_dir = self.root / "snippets"
        self.recordings_dir = Path(recordings_dir) if recordings_dir else self.root / "recordings"
        self.targets = targets or targets_.load(self.root)  # TargetError if malformed
        self.settings = settings_.load(self.root)

    def path(self, snippet_name: str, target_name: str) -> Path:
        """Where a recording lives: by names, as a recording stores them."""
        return self.recordings_dir / target_name / Path(snippet_name).with_suffix(".json")

    def load(self, path: Path) -> Recording:
        where, record = self.shown(path), self.settings.commands.record()
        fix = f" Fix: delete the file, then run `{record}`."
        # The first symbolic link on the way from the store's folder (itself included) to the file.
        ways = [way for way in [path, *path.parents] if way.is_relative_to(self.recordings_dir)]
        if linked := next((way for way in reversed(ways) if way.is_symlink()), None):
            raise RecordingError(
                f"{self.shown(linked)}: is a symbolic link; recordings are files in the tree, "
                f"so nothing is read through it. Fix: delete the link, then run `{record}`."
            )
        # Read as recorder/bundle_file.py reads a bundle, on purpose: each says its own fix.
        try:
            data = read_json(path.read_text(encoding="utf-8"))
        except RecursionError:
            raise RecordingError(f"{where}: its JSON is nested too deeply to be a recording.{fix}") from None
        except OSError as exc:
            raise RecordingError(f"{where}: cannot be read ({exc.strerror or exc}).{fix}") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise RecordingError(f"{where}: not a readable JSON recording ({exc}).{fix}") from None
        try:
            return Recording.from_dict(migrate(data, self.source), where, self.targets)
        except RecordingError as exc:
            raise RecordingError(f"{exc}{fix}") from None

    def source(self, name: str) -> bytes | None:
        """A snippet's bytes as they are now; None if there is none."""
        path = self.snippets_dir / name
        with contextlib.suppress(OSError, ValueError):  # ValueError: a name with a NUL byte
            if path.resolve().is_relative_to(self.snippets_dir.resolve()) and path.is_file():
                return path.read_bytes()
        return None

    def read(self, snippet_name: str, target_name: str) -> Recording | None:
        path = self.path(snippet_name, target_name)
        if not path.exists() and not path.is_symlink():
            return None
        rec = self.load(path)
        if (rec.snippet, rec.target) != (snippet_name, target_name):
            raise RecordingError(
                f"{self.shown(path)}: holds {rec.snippet} on {rec.target}, but its place says "
                f"{snippet_name} on {target_name}; delete it and run "
                f"`{self.settings.commands.record(snippet_name, target_name)}`."
            )
        return rec

    def write(self, rec: Recording) -> Path:
        write_atomically(path := self.path(rec.snippet, rec.target), rec.to_json())
        return path

    def standing(self, snippet: Snippet, target: Target) -> Standing:
        """Where one snippet stands on one target: its state, its recording if readable, and why."""
        at = functools.partial(Standing, snippet, target)
        if not snippet.runs_on(target):
            return at(State.NOT_APPLICABLE, None, f"needs {', '.join(sorted(snippet.requires))}")
        try:
            rec = self.read(snippet.name, target.name)
        except RecordingError as exc:
            return at(State.INVALID, None, str(exc))
        if rec is None:
            return at(State.MISSING, None, "not recorded yet")
        if not rec.of(snippet):
            return at(State.STALE, rec, "recorded with an earlier version of its code")
        if not rec.ok:
            return at(State.FAILED, rec, f"the last run ended with status {rec.status}")
        return at(State.FRESH, rec)

    def orphans(self) -> list[Path]:
        """Recording files of no snippet and target (one renamed or deleted, or undeclared)."""
        names = [p.relative_to(self.snippets_dir).as_posix() for p in self.snippets_dir.rglob("*.py")]
        expected = {self.path(name, t) for name in names for t in self.targets.names}
        return [p for p in self.recording_files() if p not in expected]

    def recording_files(self) -> list[Path]:
        return sorted(self.recordings_dir.glob("*/**/*.json"))

    def shown(self, path: Path) -> str:
        """A path relative to the project when it is inside it."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)


def this_python(root: Path) -> str:
    """This interpreter as typed in the project folder: ``.venv/bin/python``, not a bare ``python``."""
    try:
        return Path(sys.executable).relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return "python"
