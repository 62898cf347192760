"""A bundle file, every recording one run made: its format, and reading one, untrusted, whole.
Standard library only. A bundle is one JSON object::

    {"bundle": 1, "created_at": "...Z", "machine": {summary} or null,
     "recordings": [<recording objects exactly as the store writes them>],
     "recordings_sha256": "<sha256 of those recordings as the store writes them>"}

Reading checks its layout, its checksum and every recording, more strictly than the store's own
files do: a bundle comes from another machine."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config.settings import MAX_RUNS
from ..model.recording import RECORDING_FIELDS, JSONRefused, Recording, RecordingError, migrate, read_json
from .runner import MAX_STREAM_BYTES

BUNDLE_VERSION = 1
#: The most source a recording's ``code`` may hold: a lesson's snippet is a few kilobytes.
MAX_CODE_CHARS = 200_000
#: The most a recording's machine description may hold, as JSON: the recorder writes about a kilobyte.
MAX_MACHINE_CHARS = 20_000
BUNDLE_KEYS = ("bundle", "created_at", "machine", "recordings", "recordings_sha256")


class BundleError(ValueError):
    """A bundle that cannot be imported; the message names the file and says why."""


def digest(recordings: list[dict]) -> str:
    """The checksum a bundle carries: of its recordings exactly as the store writes them, whatever
    their schema, so a bundle of an older recorder is checked as it was written."""
    h = hashlib.sha256()
    for data in recordings:
        h.update((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return h.hexdigest()


@dataclass
class Bundle:
    path: Path
    created_at: str
    machine: dict | None
    recordings: list[Recording]


def _recording(data: object, where: str) -> Recording:
    """One recording of a bundle, checked as strictly as the store's own files and more."""
    if isinstance(data, dict):
        if unknown := sorted(set(data) - set(RECORDING_FIELDS)):
            raise RecordingError(f"{where}: unknown field(s) {unknown}.")
        if missing := sorted(set(RECORDING_FIELDS) - set(data)):
            raise RecordingError(f"{where}: field(s) {missing} missing.")
    rec = Recording.from_dict(data, where)
    if (runs := len(rec.outputs)) > MAX_RUNS:
        raise RecordingError(f"{where}: {runs} fresh runs; the recorder makes at most {MAX_RUNS}.")
    streams = [("stdout", rec.stdout), ("stderr", rec.stderr)]
    streams += [(f"run {n} stdout", run.stdout) for n, run in enumerate(rec.later_runs, 2)]
    for stream, lines in streams:
        # A run keeps at most MAX_STREAM_BYTES of a stream, which decode to at most as many
        # characters, and adds a line or two of its own.
        size = sum(len(line) + 1 for line in lines)
        if size > MAX_STREAM_BYTES + 1000:
            raise RecordingError(
                f"{where}: its {stream} holds {size:,} characters; a run keeps at most "
                f"{MAX_STREAM_BYTES:,} bytes of each stream, so the recorder did not make it."
            )
    machine = len(json.dumps(dict(rec.machine), ensure_ascii=False))
    if machine > MAX_MACHINE_CHARS:
        raise RecordingError(
            f"{where}: its machine description holds {machine:,} characters; the recorder writes a few "
            f"hundred, and at most {MAX_MACHINE_CHARS:,} are taken."
        )
    if len(rec.code) > MAX_CODE_CHARS:
        raise RecordingError(
            f"{where}: the code it ran holds {len(rec.code):,} characters; a snippet is at most "
            f"{MAX_CODE_CHARS:,}, so this is not a snippet's recording."
        )
    if rec.exit_code is not None and (isinstance(rec.exit_code, bool) or not isinstance(rec.exit_code, int)):
        raise RecordingError(f"{where}: exit_code {rec.exit_code!r} is neither a number nor null.")
    if isinstance(rec.duration_s, bool) or not math.isfinite(rec.duration_s) or rec.duration_s < 0:
        raise RecordingError(f"{where}: duration_s {rec.duration_s!r} is not a number of seconds.")
    return rec


#: The largest bundle --import reads unless told otherwise (--max-bundle-mb): every snippet of
#: a lesson on one target is well under a megabyte, and a file is read whole.
MAX_BUNDLE_MB = 16.0


def read_bundle(path: Path, max_mb: float, source: Callable[[str], bytes | None]) -> Bundle:
    """Parse and check one bundle file, else BundleError; ``source(name)``: a snippet's bytes, to migrate."""
    data = _layout(_parsed(path, max_mb), path)
    recs = []
    for n, item in enumerate(data["recordings"], 1):
        label = item.get("snippet") if isinstance(item, dict) else None
        named = f"recording {n}" + (f" ({label})" if isinstance(label, str) else "")
        try:
            recs.append(_recording(migrate(item, source), named))
        except RecordingError as exc:
            raise BundleError(f"{path}: {exc}") from None
    try:
        checksum = digest(data["recordings"])
    except RecursionError:
        raise BundleError(f"{path}: a recording's machine is nested too deeply; nothing imported.") from None
    if checksum != data["recordings_sha256"]:
        raise BundleError(
            f"{path}: its recordings do not match its checksum (recordings_sha256): the file was edited "
            "or damaged after it was written. Make it again with `record_runs.py --bundle FILE`."
        )
    return Bundle(path, data["created_at"], data["machine"], recs)


def _parsed(path: Path, max_mb: float) -> object:
    """The file's JSON; a file over ``max_mb`` megabytes is refused unread, so memory stays bounded."""
    try:
        size = path.stat().st_size
        if size > max_mb * 1e6:
            raise BundleError(
                f"{path}: {size / 1e6:.1f} MB, over the {max_mb:g} MB a bundle may be; nothing was "
                f"read. If you trust it, import it with --max-bundle-mb {math.ceil(size / 1e6)}."
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BundleError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise BundleError(f"{path}: is a folder, not a bundle file.") from None
    except OSError as exc:
        raise BundleError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    # Read as model/store.py reads a recording, on purpose: each says its own fix.
    try:
        return read_json(raw.decode("utf-8"))
    except RecursionError:
        raise BundleError(f"{path}: its JSON is nested too deeply; nothing imported.") from None
    except JSONRefused as exc:
        raise BundleError(f"{path}: refused, nothing imported: {exc}.") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{path}: not a JSON bundle ({exc}); it may be damaged.") from None


def _layout(data: object, path: Path) -> dict:
    """``data`` if it holds a bundle's keys, each of its type, and nothing else."""
    if not isinstance(data, dict) or "bundle" not in data:
        raise BundleError(
            f'{path}: not a bundle (a JSON object with a "bundle" key, as `record_runs.py --bundle FILE` writes).'
        )
    if data["bundle"] != BUNDLE_VERSION:
        raise BundleError(f"{path}: bundle format {data['bundle']!r}, this project reads {BUNDLE_VERSION}.")
    unknown, missing = sorted(set(data) - set(BUNDLE_KEYS)), sorted(set(BUNDLE_KEYS) - set(data))
    if wrong := [
        f"{what} key(s) {keys}" for what, keys in (("unknown", unknown), ("missing", missing)) if keys
    ]:
        raise BundleError(f"{path}: wrong bundle layout; {'; '.join(wrong)}.")
    if not isinstance(data["created_at"], str) or not isinstance(data["recordings_sha256"], str):
        raise BundleError(f"{path}: created_at and recordings_sha256 must be strings.")
    if not (data["machine"] is None or isinstance(data["machine"], dict)):
        raise BundleError(f"{path}: machine must be an object or null.")
    if not isinstance(data["recordings"], list):
        raise BundleError(f"{path}: recordings must be a list.")
    return data
