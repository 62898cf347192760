"""One tab, one machine: which recordings a target's tab may take. Standard library only.

A target's recordings all come from one machine (an emulated target's from its host's), and each
proves from what it stores that its machine is the hardware the target requires. ``adopt`` moves
recordings between targets after the same checks, so nobody edits JSON."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..config.targets import Target
from ..model.machines import Machine
from ..model.recording import Recording, RecordingError
from ..model.store import Store
from .record import plan, to_run


class MachineRefused(ValueError):
    """A recording, or this machine, is not the machine a target's tab shows."""


def names(targets: tuple[Target, ...]) -> str:
    return ", ".join(t.name for t in targets)


def recordings(store: Store, targets: tuple[Target, ...]) -> list[tuple[Path, Recording]]:
    """The readable recordings of the targets (unreadable ones are --check's business)."""
    found = []
    for target in targets:
        for path in sorted((store.recordings_dir / target.name).rglob("*.json")):
            try:
                found.append((path, store.load(path)))
            except RecordingError:
                continue
    return found


def recorded_machine(store: Store, target: Target) -> tuple[Path, Machine] | None:
    """A recording of the machine ``target``'s tab shows (its host's for an emulated one)."""
    found = recordings(store, store.targets.sharing(target))
    return (found[0][0], found[0][1].machine) if found else None


def admit(
    store: Store, target: Target, machine: Machine, command: str = "python scripts/record_runs.py"
) -> None:
    """MachineRefused unless ``machine`` may record ``target``; ``command``: the recorder as started."""
    if why := machine.unmet(target.requires):
        raise MachineRefused(
            f"--target {target}: this machine is not a {target} machine "
            f"({'; '.join(why)}; it requires {target.requires}). Nothing was recorded."
        )
    group = store.targets.sharing(target)
    for path, rec in recordings(store, group):
        if not rec.machine.same_as(machine):
            raise MachineRefused(
                f"--target {target}: {store.shown(path)} and the other recordings of "
                f"{names(group)} come from {rec.machine.identity}; this "
                f"is {machine.identity} ({'; '.join(rec.machine.differences(machine))}). "
                "One tab shows one machine, so nothing was recorded. To record that whole tab here "
                f"instead: {command} --target {target} --replace-machine (it re-records every "
                "snippet of those targets and replaces the other machine's recordings only if all succeed)."
            )


def audit(store: Store) -> list[str]:
    """Every recording that does not prove its target, and every tab from two machines."""
    problems = []
    for host in (t for t in store.targets if not t.emulated):
        group = store.targets.sharing(host)
        found = recordings(store, group)
        for path, rec in found:
            if why := rec.machine.unproven(store.targets[rec.target]):
                problems.append(f"{store.shown(path)}: it does not prove {rec.target} ({'; '.join(why)})")
        # One line per tab from two machines: its first recording, and the first from another machine.
        if odd := [(path, rec) for path, rec in found[1:] if not found[0][1].machine.same_as(rec.machine)]:
            problems.append(
                f"{names(group)} recorded on two machines: "
                f"{store.shown(found[0][0])} on {found[0][1].machine.identity}, "
                f"{store.shown(odd[0][0])} on {odd[0][1].machine.identity}"
            )
    return problems


def adopt(store: Store, source: str, target: str, names: list[str] | None = None) -> list[str]:
    """Move the recordings in recordings/<source>/ (maybe of a target that no longer exists) to
    ``target``, each only if its stored machine proves ``target`` and shares one machine with
    ``target``'s tab. Returns what was done, one line each; MachineRefused if they do not."""
    t = store.targets.get(target, "--adopt")
    lines, fits = [], []
    for path in sorted((store.recordings_dir / source).rglob("*.json")):
        shown = store.shown(path)
        try:
            rec = Recording.from_dict(json.loads(path.read_text(encoding="utf-8")), shown)
        except (ValueError, RecordingError) as exc:
            lines.append(f"kept       {shown}: unreadable ({exc})")
            continue
        if names and rec.snippet not in [n.removeprefix("snippets/") for n in names]:
            continue
        if why := rec.machine.unproven(t):
            lines.append(f"kept       {shown}: not a {target} recording ({'; '.join(why)})")
        else:
            fits.append((path, rec))
    here = recorded_machine(store, t)
    machine = here[1] if here else (fits[0][1].machine if fits else None)
    if machine is not None and (odd := [(p, r) for p, r in fits if not machine.same_as(r.machine)]):
        raise MachineRefused(
            f"--adopt {source} {target}: {store.shown(odd[0][0])} comes from "
            f"{odd[0][1].machine.identity}, but {target}'s tab shows {machine.identity}; "
            "name the snippets of one machine (--adopt FROM TO SNIPPET...). Nothing was moved."
        )
    for path, rec in fits:
        rec.target = target
        adopted = {"name": target, "description": t.description, "adopted_from": source}
        rec.machine = Machine(dict(rec.machine), target={**rec.machine.run_for, **adopted})
        store.write(rec)
        path.unlink()
        lines.append(f"adopted    {store.shown(path)} -> {store.shown(store.path(rec.snippet, target))}")
    for folder in sorted((store.recordings_dir / source).glob("**/"), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()  # a folder emptied by the move goes too
    return lines


def replace_machine(store: Store, snippets: list, target: Target, run) -> list[Recording]:
    """Re-record every snippet of ``target``'s tab on this machine into a scratch store; only if
    every run succeeds, write them all and drop the other machine's recordings. ``run(scratch,
    items, admit)`` returns (made, failed). MachineRefused when a run failed: nothing changes."""
    group = store.targets.sharing(target)
    with tempfile.TemporaryDirectory(prefix="record-runs-replace-") as tmp:
        scratch = Store(store.root, Path(tmp), store.targets)
        items = to_run(plan(scratch, snippets, group), force=True)
        made, failed = run(scratch, items, lambda t, machine: admit(scratch, t, machine))
        if failed or len(made) < len(items):
            which = ", ".join(f"{i.snippet.name} on {i.target}" for i in failed) or "interrupted"
            raise MachineRefused(
                f"--replace-machine: {len(failed)} of {len(items)} runs of {names(group)} failed ({which}); "
                "nothing was replaced, the recordings already there are kept."
            )
    for rec in made:
        store.write(rec)
    if made:
        drop_others(store, group, made[0].machine)
    return made


def drop_others(store: Store, group: tuple[Target, ...], machine: Machine) -> None:
    """Remove the recordings of a tab's targets (``group``) that come from another machine."""
    for path, rec in recordings(store, group):
        if not rec.machine.same_as(machine):
            path.unlink()
