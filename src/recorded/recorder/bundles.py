"""Bundles: every recording one run made, in one file, and merging bundles into a store.

Standard library only. A hardware runner records with ``--bundle FILE`` and uploads the
file; a merge step imports it with ``--import FILE...``. A bundle is one JSON object::

    {"bundle": 1, "created_at": "...Z", "machine": {summary} or null,
     "recordings": [<recording objects exactly as the store writes them>],
     "recordings_sha256": "<sha256 of those recordings as the store writes them>"}

Import is all-or-nothing per bundle: a file that is not a bundle, a recording that is
not a valid recording, a snippet that does not exist here, a target the snippet cannot
run on, a snippet recorded twice, or a recording of other snippet bytes than the snippet
has now (unless ``allow_stale``) refuses the whole bundle, and nothing of it is written.
Otherwise each recording is written exactly as ``Store.write`` writes it (so a recording
exported and imported again comes back byte for byte), unless the file here already
holds those bytes (unchanged, not even touched) or holds a better recording: a failed
run never replaces a good recording, and a stale one never replaces a fresh one.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config.settings import MAX_RUNS
from ..model import describe
from ..model.files import write_atomically
from ..model.recording import (
    RECORDING_FIELDS,
    JSONRefused,
    Recording,
    RecordingError,
    migrate,
    read_json,
    utc_stamp,
)
from ..model.snippets import SnippetError, load
from ..model.store import Store
from . import admit
from .runner import MAX_STREAM_BYTES

BUNDLE_VERSION = 1
#: The most source a recording's ``code`` may hold: a lesson's snippet is a few kilobytes.
MAX_CODE_CHARS = 200_000
#: The most a recording's machine description may hold, as JSON: the recorder writes about
#: a kilobyte (the CPU, its flags, the versions, the target's environment and check).
MAX_MACHINE_CHARS = 20_000
BUNDLE_KEYS = ("bundle", "created_at", "machine", "recordings", "recordings_sha256")


class BundleError(ValueError):
    """A bundle that cannot be imported; the message names the file and says why."""


def digest(recordings: list[dict]) -> str:
    """The checksum a bundle carries: of its recordings exactly as the store writes them (a
    recording's JSON object, in its order: ``json.loads(rec.to_json())``), whatever their
    schema, so a bundle of an older recorder is checked as it was written."""
    h = hashlib.sha256()
    for data in recordings:
        h.update((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return h.hexdigest()


def summary(recordings: list[Recording]) -> dict | None:
    """A short description of the machine that made the recordings, for a reviewer."""
    if not recordings:
        return None
    m = recordings[0].machine
    return {
        "description": describe.machine(m),
        "targets": sorted({r.target for r in recordings}),
        "python": m.version("python"),
        "torch": m.version("torch"),
        "numpy": m.version("numpy"),
        "git": m.get("git"),
    }


def bundle_name(recordings: list[Recording]) -> str:
    """A file name that says what a bundle holds: its kinds, its machine and the day, such as
    ``cpu-avx2-amd-epyc-2026-12-05.json`` (``empty-...`` for a run that recorded nothing)."""
    day = utc_stamp()[:10]
    if not recordings:
        return f"empty-{day}.json"
    kinds = "+".join(dict.fromkeys(r.target for r in recordings))
    m = recordings[0].machine
    named = (m.device or {}).get("name") or m.cpu.get("model") or "unknown"
    slug = re.sub(r"[^a-z0-9]+", "-", str(named).lower()).strip("-")[:40].strip("-") or "unknown"
    return f"{kinds}-{slug}-{day}.json"


def bundle_json(recordings: list[Recording], created_at: str | None = None) -> str:
    stored = [json.loads(r.to_json()) for r in recordings]
    data = {
        "bundle": BUNDLE_VERSION,
        "created_at": created_at or utc_stamp(),
        "machine": summary(recordings),
        "recordings": stored,
        "recordings_sha256": digest(stored),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_bundle(path: Path, recordings: list[Recording]) -> Path:
    """Write the bundle atomically (a temporary file beside it, then a rename)."""
    path = Path(path)
    if path.is_dir():
        raise BundleError(f"--bundle {path}: is a folder; name a file, such as {path / 'bundle.json'}.")
    write_atomically(path, bundle_json(recordings))
    return path


# -- reading -----------------------------------------------------------------------------------


@dataclass
class Bundle:
    path: Path
    created_at: str
    machine: dict | None
    recordings: list[Recording]


def _recording(data: object, where: str) -> Recording:
    """One recording of a bundle, checked as strictly as the store's own files and more."""
    if isinstance(data, dict):
        unknown = sorted(set(data) - set(RECORDING_FIELDS))
        if unknown:
            raise RecordingError(f"{where}: unknown field(s) {unknown}.")
        missing = sorted(set(RECORDING_FIELDS) - set(data))
        if missing:
            raise RecordingError(f"{where}: field(s) {missing} missing.")
    rec = Recording.from_dict(data, where)
    if len(rec.outputs) > MAX_RUNS:
        raise RecordingError(
            f"{where}: {len(rec.outputs)} fresh runs; the recorder makes at most {MAX_RUNS}."
        )
    streams = [("stdout", rec.stdout), ("stderr", rec.stderr)]
    streams += [(f"run {n} stdout", run.stdout) for n, run in enumerate(rec.runs, 2)]
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


def read_bundle(
    path: Path, max_mb: float = MAX_BUNDLE_MB, source: Callable[[str], bytes | None] = lambda name: None
) -> Bundle:
    """Parse and check one bundle file. Raises BundleError naming the file. A file over
    ``max_mb`` megabytes is refused before it is read, so memory stays bounded. Recordings
    of an older schema are brought up to this one (recording.migrate), with ``source(name)``
    giving a snippet's bytes as they are now."""
    path = Path(path)
    where = str(path)
    try:
        size = path.stat().st_size
        if size > max_mb * 1e6:
            raise BundleError(
                f"{where}: {size / 1e6:.1f} MB, over the {max_mb:g} MB a bundle may be; nothing was "
                f"read. If you trust it, import it with --max-bundle-mb {math.ceil(size / 1e6)}."
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BundleError(f"{where}: no such file.") from None
    except IsADirectoryError:
        raise BundleError(f"{where}: is a folder, not a bundle file.") from None
    except OSError as exc:
        raise BundleError(f"{where}: cannot be read ({exc.strerror or exc}).") from None
    try:
        data = read_json(raw.decode("utf-8"))
    except RecursionError:
        raise BundleError(
            f"{where}: its JSON is nested too deeply to be a bundle; nothing was imported."
        ) from None
    except JSONRefused as exc:
        raise BundleError(f"{where}: refused, nothing imported: {exc}.") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(
            f"{where}: not a JSON bundle ({exc}); it may be damaged or not a bundle at all."
        ) from None
    if not isinstance(data, dict) or "bundle" not in data:
        raise BundleError(
            f'{where}: not a bundle (a JSON object with a "bundle" key, '
            "as `record_runs.py --bundle FILE` writes)."
        )
    if data["bundle"] != BUNDLE_VERSION:
        raise BundleError(f"{where}: bundle format {data['bundle']!r}, this project reads {BUNDLE_VERSION}.")
    unknown = sorted(set(data) - set(BUNDLE_KEYS))
    missing = sorted(set(BUNDLE_KEYS) - set(data))
    if unknown or missing:
        raise BundleError(
            f"{where}: wrong bundle layout"
            + (f"; unknown key(s) {unknown}" if unknown else "")
            + (f"; missing key(s) {missing}" if missing else "")
            + "."
        )
    if not isinstance(data["created_at"], str) or not isinstance(data["recordings_sha256"], str):
        raise BundleError(f"{where}: created_at and recordings_sha256 must be strings.")
    if not (data["machine"] is None or isinstance(data["machine"], dict)):
        raise BundleError(f"{where}: machine must be an object or null.")
    if not isinstance(data["recordings"], list):
        raise BundleError(f"{where}: recordings must be a list.")
    recs = []
    for n, item in enumerate(data["recordings"], 1):
        label = item.get("snippet") if isinstance(item, dict) else None
        try:
            named = f"recording {n}" + (f" ({label})" if isinstance(label, str) else "")
            recs.append(_recording(migrate(item, source), named))
        except RecordingError as exc:
            raise BundleError(f"{where}: {exc}") from None
    try:
        checksum = digest(data["recordings"])
    except RecursionError:
        raise BundleError(
            f"{where}: a recording's machine is nested too deeply; nothing was imported."
        ) from None
    if checksum != data["recordings_sha256"]:
        raise BundleError(
            f"{where}: its recordings do not match its checksum (recordings_sha256): "
            "the file was edited or damaged after it was written. Make it again with "
            "`record_runs.py --bundle FILE`."
        )
    return Bundle(path, data["created_at"], data["machine"], recs)


# -- importing ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    recording: Recording
    action: str  # imported, unchanged, refused, or "not imported" (its bundle was refused)
    why: str = ""


@dataclass
class Report:
    path: Path
    bundle: Bundle | None
    outcomes: list[Outcome] = field(default_factory=list)
    error: str = ""  # why the bundle as a whole was refused

    @property
    def refused(self) -> bool:
        return bool(self.error) or any(o.action == "refused" for o in self.outcomes)


def _check(store: Store, bundle: Bundle, allow_stale: bool) -> tuple[list[Outcome], list[str]]:
    """What is wrong with each recording that refuses the whole bundle, and the stale ones."""
    outcomes, problems, seen = [], [], set()
    for rec in bundle.recordings:
        why = ""
        key = (rec.snippet, rec.target)
        try:
            snippet = load(store.snippets_dir, rec.snippet, store.targets)
        except SnippetError as exc:
            why = f"unknown snippet: {exc}"
        else:
            target = store.targets.by_name.get(rec.target)
            if target is None:
                why = (
                    f"unknown target {rec.target!r}; the targets are {list(store.targets.names)} "
                    f"(declared in {store.targets.source})"
                )
            elif snippet.name != rec.snippet:
                why = f"unknown snippet: name it as {snippet.name!r}"
            elif not snippet.runs_on(target):
                why = (
                    f"the snippet needs {', '.join(sorted(snippet.requires))}, which the "
                    f"{rec.target} target does not offer"
                )
            elif unproven := rec.machine.unproven(target):
                why = f"it does not prove {rec.target} ({'; '.join(unproven)}): {rec.machine.identity}"
            elif key in seen:
                why = "recorded twice in this bundle"
            elif not rec.of(snippet) and not allow_stale:
                why = (
                    f"outdated: recorded with an earlier version of the snippet's code (code sha256 "
                    f"{(rec.code_sha256 or 'unknown')[:12]}…, its code now has {snippet.code_sha256()[:12]}…); "
                    "re-record it, or import it as an earlier version's output with --allow-stale"
                )
        seen.add(key)
        outcomes.append(Outcome(rec, "refused" if why else "not imported", why))
        if why:
            problems.append(why)
    if not problems:
        problems += _one_machine(store, bundle, outcomes)
    return outcomes, problems


def whole_tabs(store: Store, bundle: Bundle) -> set[str]:
    """The tabs (host targets) whose every applicable snippet this bundle holds, all ok: such
    a bundle may replace the machine of that tab, as ``--replace-machine`` does."""
    from ..model.snippets import discover

    held = {(r.snippet, r.target) for r in bundle.recordings if r.ok}
    whole = set()
    for group in {store.targets.get(r.target).machine_of for r in bundle.recordings}:
        needed = {
            (s.name, t)
            for t in store.targets.sharing(group)
            for s in discover(store.snippets_dir)
            if s.runs_on(store.targets.get(t))
        }
        if needed <= held:
            whole.add(group)
    return whole


def _one_machine(store: Store, bundle: Bundle, outcomes: list[Outcome]) -> list[str]:
    """One tab, one machine: the bundle's recordings of a tab share one machine, and it is the
    machine already recorded there, unless the bundle re-records that whole tab."""
    problems, whole = [], whole_tabs(store, bundle)
    firsts: dict[str, Recording] = {}
    for o in outcomes:
        rec = o.recording
        group = store.targets.get(rec.target).machine_of
        first = firsts.setdefault(group, rec)
        here = None if group in whole else admit.recorded_machine(store, rec.target)
        other = (
            first.machine
            if not first.machine.same_as(rec.machine)
            else (here[1] if here and not here[1].same_as(rec.machine) else None)
        )
        if other is not None:
            where = "this bundle" if other is first.machine or here is None else store.shown(here[0])
            o.action, o.why = (
                "refused",
                (
                    f"{bundle.path}: {rec.snippet} on {rec.target} comes from {rec.machine.identity}, "
                    f"but {where} has {', '.join(store.targets.sharing(rec.target))} from "
                    f"{other.identity}: one tab shows one machine. Re-record the whole tab on one "
                    f"machine (--target {rec.target} --replace-machine --bundle FILE)"
                ),
            )
            problems.append(o.why)
    return problems


def import_bundle(
    store: Store, path: Path, allow_stale: bool = False, max_mb: float = MAX_BUNDLE_MB
) -> Report:
    """Merge one bundle into the store, all or nothing as the module docstring says."""
    try:
        bundle = read_bundle(path, max_mb, store.source)
    except BundleError as exc:
        return Report(Path(path), None, error=str(exc))
    outcomes, problems = _check(store, bundle, allow_stale)
    if problems:
        n = len(problems)
        return Report(
            bundle.path,
            bundle,
            outcomes,
            error=f"{path}: refused, nothing imported: {n} recording{'s' * (n != 1)} "
            "cannot be imported (below).",
        )
    outcomes, whole = [], whole_tabs(store, bundle)
    for rec in bundle.recordings:
        target_path = store.path(rec.snippet, rec.target)
        text = rec.to_json()
        try:
            if target_path.read_bytes() == text.encode("utf-8"):
                outcomes.append(Outcome(rec, "unchanged", "already here, byte for byte"))
                continue
        except OSError:
            pass
        snippet = load(store.snippets_dir, rec.snippet, store.targets)
        stale = not rec.of(snippet)
        try:
            here = store.read(rec.snippet, rec.target)
        except RecordingError:
            here = None  # an unreadable file here is replaced
        if here and here.ok and not rec.ok:
            outcomes.append(
                Outcome(
                    rec,
                    "refused",
                    f"a failed run ({rec.status}, exit code "
                    f"{rec.exit_code}) never replaces the good recording here, "
                    f"from {here.recorded_at}",
                )
            )
            continue
        if stale and here and here.ok and here.of(snippet):
            outcomes.append(
                Outcome(rec, "refused", "stale: it would replace a fresh recording; the fresh one is kept")
            )
            continue
        store.write(rec)
        notes = []
        if stale:
            notes.append("of an earlier version of the code (--allow-stale): shown labelled as such")
        if not rec.ok:
            notes.append(f"a failed run ({rec.status}); no good recording was here")
        if here:
            notes.append(f"replaces the recording from {here.recorded_at}")
        outcomes.append(Outcome(rec, "imported", "; ".join(notes)))
    for group in whole:  # the bundle re-recorded this tab: the other machine's leftovers go
        made = next(r.machine for r in bundle.recordings if store.targets.get(r.target).machine_of == group)
        for old, rec in admit.recordings(store, store.targets.sharing(group)):
            if not rec.machine.same_as(made):
                old.unlink()
    return Report(bundle.path, bundle, outcomes)
