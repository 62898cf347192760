"""Bundles: the recordings one run made (``--bundle FILE``), merged into a store by ``--import``.

Standard library only. Import is all or nothing per bundle (bundle_file.py reads and checks it):
one bad recording refuses the whole bundle. Each recording is written as ``Store.write`` writes it
(so it comes back byte for byte), unless the file here holds those bytes or a better recording:
a failed run never replaces a good one, nor a stale one a fresh one."""

from __future__ import annotations

import contextlib
import enum
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..config.targets import Target, TargetError
from ..model import describe
from ..model.files import write_atomically
from ..model.recording import Recording, RecordingError, utc_stamp
from ..model.snippets import SnippetError, discover, load
from ..model.store import Store
from . import admit
from .bundle_file import BUNDLE_VERSION, MAX_BUNDLE_MB, Bundle, BundleError, digest, read_bundle


def bundle_name(recordings: list[Recording]) -> str:
    """A file name that says what a bundle holds, such as ``cpu-avx2-amd-epyc-2026-12-05.json``."""
    day = utc_stamp()[:10]
    if not recordings:
        return f"empty-{day}.json"
    kinds = "+".join(dict.fromkeys(r.target for r in recordings))
    m = recordings[0].machine
    named = (m.device or {}).get("name") or m.cpu.get("model") or "unknown"
    slug = re.sub(r"[^a-z0-9]+", "-", str(named).lower()).strip("-")[:40].strip("-") or "unknown"
    return f"{kinds}-{slug}-{day}.json"


def bundle_json(recordings: list[Recording]) -> str:
    stored = [json.loads(r.to_json()) for r in recordings]
    summary = None  # a short description of the machine that made them, for a reviewer
    if recordings:
        m = recordings[0].machine
        versions = {name: m.version(name) for name in ("python", "torch", "numpy")}
        targets = sorted({r.target for r in recordings})
        summary = {"description": describe.machine(m), "targets": targets, **versions, "git": m.get("git")}
    data = {"bundle": BUNDLE_VERSION, "created_at": utc_stamp(), "machine": summary, "recordings": stored}
    data["recordings_sha256"] = digest(stored)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_bundle(path: Path, recordings: list[Recording]) -> Path:
    path = Path(path)
    if path.is_dir():
        raise BundleError(f"--bundle {path}: is a folder; name a file, such as {path / 'bundle.json'}.")
    write_atomically(path, bundle_json(recordings))
    return path


class Action(enum.StrEnum):
    """What importing did with one recording of a bundle; its value is what the report prints."""

    IMPORTED = "imported"
    UNCHANGED = "unchanged"
    REFUSED = "refused"
    NOT_IMPORTED = "not imported"  # its bundle was refused


@dataclass
class Outcome:
    recording: Recording
    action: Action
    why: str = ""


@dataclass
class Report:
    path: Path
    bundle: Bundle | None
    outcomes: list[Outcome] = field(default_factory=list)
    error: str = ""  # why the bundle as a whole was refused

    @property
    def refused(self) -> bool:
        return bool(self.error) or any(o.action is Action.REFUSED for o in self.outcomes)


def _outcomes(store: Store, bundle: Bundle, allow_stale: bool) -> list[Outcome]:
    """Each recording, refused with why when it refuses the whole bundle, else not imported."""
    outcomes, seen = [], set()
    for rec in bundle.recordings:
        why = ""
        try:
            snippet = load(store.snippets_dir, rec.snippet, store.targets)
            target = store.targets.get(rec.target)
        except SnippetError as exc:
            why = f"unknown snippet: {exc}"
        except TargetError as exc:
            why = str(exc)
        else:
            needs = ", ".join(sorted(snippet.requires))
            if snippet.name != rec.snippet:
                why = f"unknown snippet: name it as {snippet.name!r}"
            elif not snippet.runs_on(target):
                why = f"the snippet needs {needs}, which the {rec.target} target does not offer"
            elif unproven := rec.machine.unproven(target):
                why = f"it does not prove {rec.target} ({'; '.join(unproven)}): {rec.machine.identity}"
            elif (rec.snippet, rec.target) in seen:
                why = "recorded twice in this bundle"
            elif not rec.of(snippet) and not allow_stale:
                why = (
                    f"outdated: recorded with an earlier version of the snippet's code (code sha256 "
                    f"{rec.code_sha256[:12] + '…' if rec.code_sha256 else 'unknown'}, its code now has "
                    f"{snippet.code_sha256()[:12]}…); "
                    "re-record it, or import it as an earlier version's output with --allow-stale"
                )
        seen.add((rec.snippet, rec.target))
        outcomes.append(Outcome(rec, Action.REFUSED if why else Action.NOT_IMPORTED, why))
    if not any(o.why for o in outcomes):
        _one_machine(store, bundle, outcomes)
    return outcomes


def whole_tabs(store: Store, bundle: Bundle) -> set[Target]:
    """The tabs (host targets) whose every applicable snippet this bundle holds, all ok: such
    a bundle may replace the machine of that tab, as ``--replace-machine`` does."""
    held = {(r.snippet, r.target) for r in bundle.recordings if r.ok}
    hosts = {store.targets.host_of(store.targets[r.target]) for r in bundle.recordings}
    snippets = discover(store.snippets_dir) if hosts else []
    return {
        host
        for host in hosts
        if {(s.name, t.name) for t in store.targets.sharing(host) for s in snippets if s.runs_on(t)} <= held
    }


def _one_machine(store: Store, bundle: Bundle, outcomes: list[Outcome]) -> None:
    """Refuse each recording of a tab from another machine than the bundle's first one of that tab,
    or than the machine already recorded there, unless the bundle re-records that whole tab."""
    whole, firsts = whole_tabs(store, bundle), dict[Target, Recording]()
    for o in outcomes:
        rec = o.recording
        target = store.targets[rec.target]
        host = store.targets.host_of(target)
        first = firsts.setdefault(host, rec)
        here = None if host in whole else admit.recorded_machine(store, target)
        if not first.machine.same_as(rec.machine):
            where, other = "this bundle", first.machine
        elif here and not here[1].same_as(rec.machine):
            where, other = store.shown(here[0]), here[1]
        else:
            continue
        o.action = Action.REFUSED
        o.why = (
            f"{bundle.path}: {rec.snippet} on {rec.target} comes from {rec.machine.identity}, "
            f"but {where} has {admit.names(store.targets.sharing(target))} from "
            f"{other.identity}: one tab shows one machine. Re-record the whole tab on one "
            f"machine (--target {rec.target} --replace-machine --bundle FILE)"
        )


def import_bundle(
    store: Store, path: Path, allow_stale: bool = False, max_mb: float = MAX_BUNDLE_MB
) -> Report:
    """Merge one bundle into the store, all or nothing as the module docstring says."""
    try:
        bundle = read_bundle(path, max_mb, store.source)
    except BundleError as exc:
        return Report(Path(path), None, error=str(exc))
    outcomes = _outcomes(store, bundle, allow_stale)
    if n := sum(o.action is Action.REFUSED for o in outcomes):
        error = (
            f"{path}: refused, nothing imported: {n} recording{'s' * (n != 1)} cannot be imported (below)."
        )
        return Report(bundle.path, bundle, outcomes, error=error)
    whole = whole_tabs(store, bundle)
    outcomes = [_merge(store, rec) for rec in bundle.recordings]
    made = {store.targets.host_of(store.targets[r.target]): r.machine for r in bundle.recordings}
    for host in whole:  # the bundle re-recorded this tab (on one machine): the other's leftovers go
        admit.drop_others(store, store.targets.sharing(host), made[host])
    return Report(bundle.path, bundle, outcomes)


def _merge(store: Store, rec: Recording) -> Outcome:
    """Write one checked recording, unless the file here holds those bytes or a better recording."""
    with contextlib.suppress(OSError):
        if store.path(rec.snippet, rec.target).read_bytes() == rec.to_json().encode("utf-8"):
            return Outcome(rec, Action.UNCHANGED, "already here, byte for byte")
    snippet = load(store.snippets_dir, rec.snippet, store.targets)
    stale = not rec.of(snippet)
    try:
        here = store.read(rec.snippet, rec.target)
    except RecordingError:
        here = None  # an unreadable file here is replaced
    if here and here.ok and not rec.ok:
        why = f"a failed run ({rec.status}, exit code {rec.exit_code}) never replaces the good recording here"
        return Outcome(rec, Action.REFUSED, f"{why}, from {here.recorded_at}")
    if stale and here and here.ok and here.of(snippet):
        why = "stale: it would replace a fresh recording; the fresh one is kept"
        return Outcome(rec, Action.REFUSED, why)
    store.write(rec)
    notes = []
    if stale:
        notes.append("of an earlier version of the code (--allow-stale): shown labelled as such")
    if not rec.ok:
        notes.append(f"a failed run ({rec.status}); no good recording was here")
    if here:
        notes.append(f"replaces the recording from {here.recorded_at}")
    return Outcome(rec, Action.IMPORTED, "; ".join(notes))
