"""What the recorder's command line does, given its options: record, compare, check or
list, import, adopt. Standard library only; cli.py parses the arguments into ``Options``.

Importing this module must stay cheap: with nothing stale, a run reads file hashes and
JSON and exits without starting torch.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from . import describe, kinds, lessons, provenance
from .bundles import MAX_BUNDLE_MB, Report, import_bundle, write_bundle
from .choose import ALL, AUTO, Choice, choose, named
from .listing import check, in_parts, say_part, show_list
from .record import Item, Part, part, plan, record, to_run
from .snippets import Snippet, discover, load
from .store import SCHEMA_VERSION, Recording, RecordingError, State, Store, locked, write_atomically

#: How the recorder's modes are named in Options.mode.
MODES = ("record", "check", "list", "compare", "adopt", "import", "upgrade")


class UsageError(Exception):
    """Bad input: printed as it is, exit status 2."""


@dataclass(frozen=True)
class Options:
    """What the user asked for, parsed and checked once (cli.parse_args)."""

    mode: str = "record"
    snippets: tuple[str, ...] = ()
    target: str | None = None  # names ("cpu,cpu-avx2"), "all" or "auto"; None: the mode's default
    force: bool = False
    replace_machine: bool = False
    timeout: float | None = None
    fail_fast: bool = False
    refuse_busy: bool = False
    strict: bool = False
    bundle: str | None = None
    allow_stale: bool = False
    shard: tuple[int, int] | None = None
    out: str | None = None
    adopt: tuple[str, str] | None = None
    files: tuple[str, ...] = ()  # --import's bundles
    max_bundle_mb: float = MAX_BUNDLE_MB  # --import reads no larger bundle
    #: The recorder as the user started it, for message prefixes ("scripts/record_runs.py"),
    #: and as a command to type again, interpreter included, for fix lines.
    prog: str = "scripts/record_runs.py"
    command: str = "python scripts/record_runs.py"


def select(store: Store, names: tuple[str, ...]) -> list[Snippet]:
    if not names:
        return discover(store.snippets_dir)
    chosen = []
    for name in names:
        name = name.replace("\\", "/")
        name = name.removeprefix("./").removeprefix("snippets/")
        chosen.append(load(store.snippets_dir, name))
    return chosen


def cannot(store: Store, name: str, why: str, done: str = "recorded") -> UsageError:
    others = [t for t in store.targets.names if t != name]
    return UsageError(
        f"--target {name}: {why}. Nothing was {done}. "
        f"{'Record' if done == 'recorded' else 'Run'} on a machine that is what "
        f"{name} claims ({store.targets.get(name).description})"
        + (f", or choose another target: {', '.join(others)}." if others else ".")
    )


def save_bundle(path: str | None, made: list[Recording]) -> None:
    if path is None:
        return
    write_bundle(Path(path), made)
    n = len(made)
    print(f"bundle {path}: {n} recording{'s' * (n != 1)}", file=sys.stderr)


# -- recording and comparing -------------------------------------------------------------------


def do_record(
    opts: Options, store: Store, published: Store, snippets: list[Snippet], made: list[Recording]
) -> int:
    """Record on the named targets, on every target this machine can run, or on the auto one."""
    parts: dict[str, Part] = {}  # each target's shard, computed once
    planned: dict[str, list[Item]] = {}

    def items_for(t: str) -> list[Item]:
        if t not in planned:
            planned[t] = plan(store, snippets, (t,))
            if opts.shard:
                parts[t] = part(published, snippets, t, opts.shard)
                planned[t] = in_parts(planned[t], parts)
        return planned[t]

    choice = choose(
        store.targets,
        opts.target,
        ALL,
        whole_machines=opts.replace_machine,
        needed=lambda t: opts.replace_machine or bool(to_run(items_for(t), opts.force)),
    )
    if choice.named and choice.skipped:  # asked for by name: say so, and record nothing
        raise cannot(store, *choice.skipped[0])
    for name, problem in choice.skipped:
        if work := to_run(items_for(name), opts.force):
            print(
                f"skipped {name}: this machine cannot run it ({problem}); its {len(work)} missing "
                "or stale recordings are left for a machine that can",
                file=sys.stderr,
            )

    failed_runs = 0
    for name in choice.chosen:
        items = items_for(name)
        work = to_run(items, opts.force)
        if opts.shard:
            say_part(parts[name])
        if not work and not opts.replace_machine:
            skipped = sum(i.state is State.NOT_APPLICABLE for i in items)
            print(
                f"nothing to record on {name}: {len(items) - skipped} fresh"
                + (f", {skipped} not applicable" if skipped else "")
                + (f" in {opts.out}" if opts.out else ""),
                file=sys.stderr,
            )
            continue
        before = len(made)

        def keep(rec: Recording, written: bool) -> None:
            if written:
                made.append(rec)

        def run(into: Store, work: list[Item], admit) -> tuple[list[Recording], list[Item]]:
            return record(
                into,
                work,
                timeout=opts.timeout,
                fail_fast=opts.fail_fast,
                admit=admit,
                on_run=None if opts.replace_machine else keep,
                refuse_busy=opts.refuse_busy,
            )

        try:
            if opts.replace_machine:
                made.extend(kinds.replace_machine(store, snippets, name, run))
                failed: list[Item] = []
            else:
                _, failed = run(store, work, lambda t, info: kinds.admit(store, t, info, opts.command))
        except kinds.MachineRefused as exc:
            if choice.named:
                raise
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        failed_runs += len(failed)
        print(
            f"recorded {len(made) - before} of {len(work)} on {name}"
            + (f" into {opts.out}" if opts.out else "")
            + (f"; {len(failed)} failed" if failed else ""),
            file=sys.stderr,
        )
        if failed and opts.fail_fast:
            break
    save_bundle(opts.bundle, made)
    return 1 if failed_runs else 0


def compare_target(store: Store, opts: Options, snippets: list[Snippet]) -> tuple[str, str]:
    """The one target --compare runs on, and why (for the skipped-snippet notes)."""
    if (opts.target or AUTO) == ALL:
        raise UsageError("--compare runs on one target: name it with --target, or use --target auto.")
    if opts.target != AUTO and opts.target is not None and len(named(store.targets, opts.target)) > 1:
        raise UsageError("--compare runs on one target: name one with --target.")
    choice: Choice = choose(store.targets, opts.target, AUTO, needed=lambda t: bool(snippets))
    if choice.named:
        if choice.skipped:
            raise cannot(store, *choice.skipped[0], done="run")
        return choice.chosen[0], f"--target {choice.chosen[0]}"
    if not snippets:
        return choice.chosen[0], "the first auto target this machine has"  # nothing will run
    return choice.chosen[0], choice.why() or "the first auto target this machine can run"


def do_compare(opts: Options, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    from . import compare  # only --compare needs it

    target, why = compare_target(published, opts, snippets)
    if opts.shard:
        mine = part(published, snippets, target, opts.shard)
        say_part(mine)
        snippets = [
            s for s in snippets if s.name in mine.names or not s.runs_on(published.targets.get(target))
        ]

    with tempfile.TemporaryDirectory(prefix="record-runs-compare-") as tmp:
        # Without --out the runs go to a scratch store that is thrown away: recordings/ is
        # never written. With --out they go to DIR, by the same rules as recording.
        store = Store(published.root, Path(opts.out) if opts.out else Path(tmp), published.targets)
        items = plan(store, snippets, (target,))
        skipped = {
            i.snippet.name: f"needs {', '.join(sorted(i.snippet.requires))}, and this run is on "
            f"{target} ({why})"
            for i in items
            if i.state is State.NOT_APPLICABLE
        }
        work = to_run(items, force=True)
        here: dict[str, Recording] = {}

        def keep(rec: Recording, written: bool) -> None:
            here[rec.snippet] = rec
            if written:
                made.append(rec)

        failed: list[Item] = []
        if work:
            _, failed = record(
                store,
                work,
                timeout=opts.timeout,
                fail_fast=opts.fail_fast,
                on_run=keep,
                refuse_busy=opts.refuse_busy,
            )
        if here:
            machine = compare.machine_words(next(iter(here.values())).machine)
        else:
            machine = describe.cpu({"cpu": provenance.cpu()})
        print(compare.table(published, snippets, here, skipped, target, machine), end="")
        if opts.out:
            print(f"this machine's runs: {len(made)} written to {opts.out}", file=sys.stderr)
        save_bundle(opts.bundle, made)
    return 1 if failed else 0


# -- what runs nothing -------------------------------------------------------------------------


def do_check_or_list(opts: Options, store: Store, published: Store, snippets: list[Snippet]) -> int:
    """--list and --check: the chosen targets (every one by default), probing nothing."""
    names = choose(store.targets, opts.target, ALL, needed=lambda t: False).chosen
    items = plan(store, snippets, names)
    if opts.shard:
        parts = {t: part(published, snippets, t, opts.shard) for t in names}
        for p in parts.values():
            say_part(p)
        items = in_parts(items, parts)
    if opts.mode == "list":
        show_list(items, lessons.load(store.root))
        print(kinds.this_machine(store.targets), file=sys.stderr)  # the table stays a table
        return 0
    return check(items, opts.strict, store, opts.command)


def do_import(opts: Options, store: Store) -> int:
    for name in opts.files:
        if not Path(name).is_file():
            hint = " (--import takes bundle files only, not snippets)" if name.endswith(".py") else ""
            raise UsageError(f"--import {name}: no such file{hint}. Nothing was imported.")
    return import_bundles(
        store, [Path(name) for name in opts.files], opts.allow_stale, sys.stdout, opts.max_bundle_mb
    )


def do_upgrade(store: Store) -> int:
    """Bring every recording of the store up to this version's schema (store.migrate), as
    ``asv update`` does its results; nothing runs. A recording that cannot be read is left
    as it is and said."""
    upgraded = current = 0
    for path in store.recording_files():
        try:
            before = path.read_bytes()
            rec = store.load(path)
        except (OSError, RecordingError) as exc:
            print(f"left as it is: {exc}")
            continue
        if rec.to_json().encode("utf-8") == before:
            current += 1
            continue
        write_atomically(path, rec.to_json())
        upgraded += 1
        print(
            f"upgraded   {store.shown(path)}" + ("" if rec.code_sha256 else " (stale: made from other bytes)")
        )
    print(f"{upgraded} upgraded to schema {SCHEMA_VERSION}, {current} already current")
    return 0


def do_adopt(opts: Options, store: Store) -> int:
    assert opts.adopt is not None
    print("\n".join(kinds.adopt(store, *opts.adopt, list(opts.snippets))))
    return 0


def run(opts: Options, published: Store, made: list[Recording]) -> int:
    """Do what the options ask, in the project of ``published`` (its recordings/); each
    recording made is appended to ``made`` as it is written. Raises what cli.main reports."""
    if opts.out:
        out = Path(opts.out)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {opts.out}: exists and is not a folder.")
    if opts.bundle and Path(opts.bundle).is_dir():
        raise UsageError(
            f"--bundle {opts.bundle}: is a folder; name a file, such as {Path(opts.bundle) / 'bundle.json'}."
        )
    store = Store(published.root, Path(opts.out), published.targets) if opts.out else published
    if opts.mode in ("check", "list"):
        return do_check_or_list(opts, store, published, select(store, opts.snippets))
    if opts.mode == "compare" and not opts.out:  # its runs go to a scratch store
        return do_compare(opts, published, select(store, opts.snippets), made)
    # Whatever writes recordings holds the store's lock: two at once take turns.
    with locked(store.recordings_dir, f"{opts.prog}, {opts.mode}", say=lambda s: print(s, file=sys.stderr)):
        if opts.mode == "import":
            return do_import(opts, store)
        if opts.mode == "adopt":
            return do_adopt(opts, store)
        if opts.mode == "upgrade":
            return do_upgrade(store)
        snippets = select(store, opts.snippets)
        if opts.mode == "compare":
            return do_compare(opts, published, snippets, made)
        return do_record(opts, store, published, snippets, made)


# -- reporting an import ----------------------------------------------------------------------


def show(report: Report, out: TextIO) -> None:
    b = report.bundle
    if b is None:
        print(f"refused    {report.error}", file=out)
        return
    who = (b.machine or {}).get("description") or "an unnamed machine"
    n = len(b.recordings)
    print(f"{report.path}: {n} recording{'s' * (n != 1)}, made {b.created_at} on {who}", file=out)
    if report.error:
        print(f"  {report.error}", file=out)
    for o in report.outcomes:
        line = f"  {o.action:<12} {o.recording.snippet} on {o.recording.target}"
        print(line + (f": {o.why}" if o.why else ""), file=out)


def import_bundles(
    store: Store, paths: list[Path], allow_stale: bool, out: TextIO, max_mb: float = MAX_BUNDLE_MB
) -> int:
    """Import each bundle in turn, report per recording. 0 when nothing was refused, else 1."""
    counts = {"imported": 0, "unchanged": 0, "refused": 0, "not imported": 0}
    whole = refused = 0
    for path in paths:
        report = import_bundle(store, Path(path), allow_stale, max_mb)
        show(report, out)
        refused += report.refused
        whole += bool(report.error)
        for o in report.outcomes:
            counts[o.action] += 1
    words = ", ".join(f"{v} {k}" for k, v in counts.items() if v or k != "not imported")
    bundles = f"{len(paths)} bundle{'s' * (len(paths) != 1)}"
    as_a_whole = f"; {whole} bundle{'s' * (whole != 1)} refused as a whole" if whole else ""
    print(f"{bundles}: {words}{as_a_whole}", file=out)
    return 1 if refused else 0
