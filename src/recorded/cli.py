"""The command line of scripts/record_runs.py. Standard library only.

Importing this module must stay cheap: with nothing stale, a run reads file hashes and
JSON and exits without starting torch.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from . import describe, kinds, lessons, provenance, runner
from .bundles import BundleError, import_bundles, write_bundle
from .listing import check, in_shard, shard_filter, show_list
from .record import Item, plan, record, to_run
from .runner import TargetCheckFailed
from .snippets import Snippet, SnippetError, discover, load
from .store import Recording, RecordingError, State, Store, this_python
from .targets import TargetError

EPILOG = """\
examples:
  record_runs.py                      record what is missing, stale or failed, on every
                                      target this machine can run (the targets live in
                                      pyproject.toml; a target whose check fails here is
                                      skipped, with the reason)
  record_runs.py --target cpu-avx2    record on one target only (--target cpu,cpu-avx2:
                                      on those two)
  record_runs.py my_lesson/02_topic.py
                                      record one snippet if it is missing, stale or failed
                                      (a fresh one is not re-run; add --force for that)
  record_runs.py --check              list missing, stale and failed recordings; exit 1 if any
                                      that must be fresh (targets marked required always,
                                      the others with --strict)
  record_runs.py --list               every snippet and target, with state and last duration

hardware runners in CI:
  record_runs.py --target cuda --bundle cuda.json
                                      record as usual, and also write every recording this
                                      run made into one file (an empty bundle when nothing
                                      needed recording), to upload as an artifact
  record_runs.py --shard 2/3 --bundle part2.json
                                      take the second third of the snippets: the split is
                                      balanced by the durations recorded in recordings/,
                                      is the same on every runner, and the 3 shards cover
                                      every snippet exactly once (--list/--check --shard
                                      show one shard's part)
  record_runs.py --import cpu.json cuda.json
                                      merge bundles into recordings/, each all or nothing:
                                      a bundle that is damaged, names an unknown snippet or
                                      target, or holds a recording of an older version of a
                                      snippet is refused; a failed run never replaces a good
                                      recording; importing a bundle twice changes nothing.
                                      Exit 1 if anything was refused
  record_runs.py --import old.json --allow-stale
                                      import recordings of outdated snippets anyway; they
                                      show as stale on the site and in --check

readers:
  record_runs.py --compare my_lesson/06_timing.py
                                      run snippets here, without touching recordings/, and
                                      print this machine's verdict lines (": True"/": False")
                                      and timings beside the published CPU and CUDA ones
  record_runs.py --compare --out mine/
                                      the same, and keep this machine's recordings in
                                      mine/<target>/... (the layout of recordings/)
  record_runs.py --out mine/          record into mine/ instead of recordings/; only what
                                      is missing, stale or failed there runs

exit status: 0 done; 1 a run failed, something must be recorded (--check) or a bundle was
refused (--import); 2 bad usage (nothing was run or written)
"""


class UsageError(Exception):
    """Bad input: printed as it is, exit status 2."""


def _shard_arg(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give I/N with 1 <= I <= N, such as 1/2 (the first of two runners)")
    return int(m[1]), int(m[2])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="record_runs.py",
        description="Run the snippets of every lesson and record what they print, per target.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("snippets", nargs="*", metavar="SNIPPET",
                   help="snippet paths (under snippets/, or with the snippets/ prefix); default: all. "
                        "A named snippet runs only if its recording is missing, stale or failed, "
                        "unless --force")
    p.add_argument("--target", default=None, metavar="NAME",
                   help="a target from pyproject.toml ([tool.record-runs.targets.NAME], such as "
                        "cpu, cpu-avx2 or cuda), or several: cpu,cpu-avx2; 'all': every target this machine can run (the "
                        "default when recording); 'auto': the first of [tool.record-runs] auto "
                        "that this machine can run (the default with --compare)")
    p.add_argument("--force", action="store_true", help="re-record even fresh recordings")
    p.add_argument("--replace-machine", action="store_true",
                   help="with --target: re-record its whole tab here, replacing another machine's")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="per-snippet limit (default: the snippet's own, else 300)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    p.add_argument("--refuse-busy", action="store_true",
                   help="do not record a timing snippet (metadata timing = true) while other work "
                        "uses more than a quarter of the CPUs, before or after its run; without "
                        "it the recorder warns and records the figure")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="run nothing; list missing, stale and failed recordings")
    mode.add_argument("--list", action="store_true",
                      help="run nothing; show every snippet and target with its state")
    mode.add_argument("--compare", action="store_true",
                      help="run the snippets here without touching recordings/ and print this "
                           "machine's verdict and timing lines beside the published ones")
    mode.add_argument("--adopt", nargs=2, metavar=("FROM", "TO"),
                      help="move recordings/FROM/ to target TO, each only if its machine fits TO")
    mode.add_argument("--import", dest="import_", nargs="+", metavar="FILE",
                      help="merge bundles (from --bundle) into recordings/, each all or nothing")
    p.add_argument("--strict", action="store_true",
                   help="with --check: CUDA recordings must be fresh too (the release rule)")
    p.add_argument("--bundle", metavar="FILE",
                   help="also write every recording this run made into FILE (atomically)")
    p.add_argument("--allow-stale", action="store_true",
                   help="with --import: import recordings of outdated snippets, marked stale")
    p.add_argument("--shard", type=_shard_arg, metavar="I/N",
                   help="take only shard I of N: the snippets split across N runners, balanced "
                        "by their recorded durations")
    p.add_argument("--out", metavar="DIR",
                   help="use DIR instead of recordings/ (DIR/<target>/<snippet>.json): to "
                        "record into, or with --compare to keep this machine's runs")
    args = p.parse_args(argv)
    if args.timeout is not None and args.timeout <= 0:
        p.error("--timeout takes a positive number of seconds")
    if args.bundle and (args.check or args.list or args.import_):
        p.error("--bundle goes with a run that records (or --compare), not with --check, --list or --import")
    if args.allow_stale and not args.import_:
        p.error("--allow-stale goes with --import")
    if args.import_ and args.snippets:
        p.error("--import takes bundle files only; the snippets they hold are imported")
    if args.replace_machine and (args.target in (None, "all", "auto") or args.snippets):
        p.error("--replace-machine takes --target NAME and no snippets: it re-records every snippet")
    if args.import_ and args.shard:
        p.error("--shard goes with recording, --compare, --check or --list, not with --import")
    return args


def select(store: Store, names: list[str]) -> list[Snippet]:
    if not names:
        return discover(store.snippets_dir)
    chosen = []
    for name in names:
        name = name.replace("\\", "/")
        name = name.removeprefix("./").removeprefix("snippets/")
        chosen.append(load(store.snippets_dir, name))
    return chosen


def named_targets(store: Store, requested: str | None) -> list[str]:
    """The targets named on the command line (``cpu`` or ``cpu,cpu-avx2``), [] for all or
    auto, or a UsageError naming the known ones."""
    if requested in (None, "all", "auto"):
        return []
    try:
        return [store.targets.get(name.strip(), "--target").name
                for name in dict.fromkeys(requested.split(","))]
    except TargetError as exc:
        raise UsageError(f"{exc} Or use --target all or --target auto. Nothing was run.") from None


def cannot(store: Store, name: str, why: Exception, done: str = "recorded") -> UsageError:
    others = [t for t in store.targets.names if t != name]
    return UsageError(f"--target {name}: {why}. Nothing was {done}. "
                      f"{'Record' if done == 'recorded' else 'Run'} on a machine that is what "
                      f"{name} claims ({store.targets.get(name).description})"
                      + (f", or choose another target: {', '.join(others)}." if others else "."))


def runnable(store: Store, name: str) -> str | None:
    """Why this machine cannot run the target, or None. Starts Python only for a check."""
    if kinds.unmet_here(store.targets, store.targets.get(name)):
        return kinds.why_not_here(store.targets, store.targets.get(name))
    try:
        runner.check(store.targets.get(name))
    except TargetCheckFailed as exc:
        return str(exc)
    return None


def auto_candidates(store: Store) -> list[str]:
    """The auto targets this machine may run, by a cheap look (no Python started)."""
    found = [n for n in store.targets.auto
             if store.targets.get(n).detected() and not kinds.unmet_here(store.targets, store.targets.get(n))]
    if not found:
        raise UsageError(f"--target auto: none of the targets {list(store.targets.auto)} "
                         "([tool.record-runs] auto) can run on this machine; name one with --target.")
    return found


# -- bundles -----------------------------------------------------------------------------------


def save_bundle(path: str | None, made: list[Recording]) -> None:
    if path is None:
        return
    write_bundle(Path(path), made)
    n = len(made)
    print(f"bundle {path}: {n} recording{'s' * (n != 1)}", file=sys.stderr)


# -- recording and comparing -------------------------------------------------------------------


def do_record(args, store: Store, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    """Record on the named target, on every target this machine can run, or on the auto one."""
    named = named_targets(store, args.target)
    requested = args.target or "all"
    names = named or (auto_candidates(store) if requested == "auto" else list(store.targets.names))
    if args.replace_machine:  # one run per tab: the host and its emulations together
        names = list(dict.fromkeys(store.targets.get(n).machine_of for n in names))

    def items_for(t: str) -> list[Item]:
        items = plan(store, snippets, (t,))
        return in_shard(items, published, snippets, args.shard, say=False) if args.shard else items

    attempted = failed_runs = 0
    for name in names:
        items = items_for(name)
        work = to_run(items, args.force)
        skipped = [i for i in items if i.state is State.NOT_APPLICABLE]
        if args.shard:
            shard_filter(published, snippets, name, args.shard)  # says which snippets it takes
        if not work and not args.replace_machine:
            print(f"nothing to record on {name}: {len(items) - len(skipped)} fresh"
                  + (f", {len(skipped)} not applicable" if skipped else "")
                  + (f" in {args.out}" if args.out else ""), file=sys.stderr)
            if requested == "auto":
                break
            continue
        if problem := next(filter(None, (runnable(store, n) for n in (
                store.targets.sharing(name) if args.replace_machine else [name]))), None):
            if named:  # asked for by name: say so, and record nothing more
                raise cannot(store, name, problem)
            print(f"skipped {name}: this machine cannot run it ({problem}); its {len(work)} missing "
                  "or stale recordings are left for a machine that can", file=sys.stderr)
            continue
        before = len(made)

        def keep(rec: Recording, written: bool) -> None:
            if written:
                made.append(rec)

        def run(into: Store, work: list[Item], admit) -> tuple[list[Recording], list[Item]]:
            return record(into, work, timeout=args.timeout, fail_fast=args.fail_fast, admit=admit,
                          on_run=None if args.replace_machine else keep, refuse_busy=args.refuse_busy)

        try:
            if args.replace_machine:
                made.extend(kinds.replace_machine(store, snippets, name, run))
                failed = []
            else:
                _, failed = run(store, work, lambda target, info: kinds.admit(store, target, info))
        except kinds.MachineRefused as exc:
            if named:
                raise
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        attempted += 1
        failed_runs += len(failed)
        print(f"recorded {len(made) - before} of {len(work)} on {name}"
              + (f" into {args.out}" if args.out else "")
              + (f"; {len(failed)} failed" if failed else ""), file=sys.stderr)
        if requested == "auto" or (failed and args.fail_fast):
            break
    save_bundle(args.bundle, made)
    return 1 if failed_runs else 0


def compare_target(store: Store, requested: str | None, snippets: list[Snippet]) -> tuple[str, str]:
    """The target --compare runs on, and why (for the skipped-snippet notes)."""
    if named := named_targets(store, requested):
        if len(named) > 1:
            raise UsageError("--compare runs on one target: name one with --target.")
        named = named[0]
        if snippets and (problem := runnable(store, named)):
            raise cannot(store, named, problem, "run")
        return named, f"--target {named}"
    if requested == "all":
        raise UsageError("--compare runs on one target: name it with --target, or use --target auto.")
    problems = []
    for name in store.targets.auto:
        if not snippets and store.targets.get(name).detected():
            return name, "the first auto target this machine has"  # nothing will run
        if (problem := runnable(store, name)) is None:
            return name, "; ".join(problems) or "the first auto target this machine can run"
        problems.append(f"{name}: {problem}")
    raise UsageError(f"--target auto: no auto target can run here ({'; '.join(problems)}). Nothing was run.")


def do_compare(args, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    from . import compare  # only --compare needs it

    target, why = compare_target(published, args.target, snippets)
    if args.shard:
        chosen = shard_filter(published, snippets, target, args.shard)
        snippets = [s for s in snippets
                    if s.name in chosen or not s.runs_on(published.targets.get(target))]

    with tempfile.TemporaryDirectory(prefix="record-runs-compare-") as tmp:
        # Without --out the runs go to a scratch store that is thrown away: recordings/ is
        # never written. With --out they go to DIR, by the same rules as recording.
        store = Store(published.root, Path(args.out) if args.out else Path(tmp), published.targets)
        items = plan(store, snippets, (target,))
        skipped = {i.snippet.name: f"needs {', '.join(sorted(i.snippet.requires))}, and this run is on "
                                   f"{target} ({why})"
                   for i in items if i.state is State.NOT_APPLICABLE}
        work = to_run(items, force=True)
        here: dict[str, Recording] = {}

        def keep(rec: Recording, written: bool) -> None:
            here[rec.snippet] = rec
            if written:
                made.append(rec)

        failed = []
        if work:
            _, failed = record(store, work, timeout=args.timeout, fail_fast=args.fail_fast, on_run=keep,
                           refuse_busy=args.refuse_busy)
        if here:
            machine = compare.machine_words(next(iter(here.values())).machine)
        else:
            machine = describe.cpu({"cpu": provenance.cpu()})
        print(compare.table(published, snippets, here, skipped, target, machine), end="")
        if args.out:
            print(f"this machine's runs: {len(made)} written to {args.out}", file=sys.stderr)
        save_bundle(args.bundle, made)
    return 1 if failed else 0


def main(argv: list[str] | None = None, root: Path | None = None) -> int:
    args = parse_args(argv)
    root = Path(root or Path.cwd())
    made: list[Recording] = []
    try:
        published = Store(root)
    except TargetError as exc:
        print(f"record_runs.py: {exc} Nothing was run or written.", file=sys.stderr)
        return 2
    try:
        if args.out:
            out = Path(args.out)
            if out.exists() and not out.is_dir():
                raise UsageError(f"--out {args.out}: exists and is not a folder.")
        if args.bundle and Path(args.bundle).is_dir():
            raise UsageError(f"--bundle {args.bundle}: is a folder; name a file, such as "
                             f"{Path(args.bundle) / 'bundle.json'}.")
        store = Store(root, Path(args.out), published.targets) if args.out else published
        if args.import_:
            for name in args.import_:
                if not Path(name).is_file():
                    hint = " (--import takes bundle files only, not snippets)" if name.endswith(".py") else ""
                    raise UsageError(f"--import {name}: no such file{hint}. Nothing was imported.")
            return import_bundles(store, args.import_, args.allow_stale, sys.stdout)
        if args.adopt:
            print("\n".join(kinds.adopt(store, *args.adopt, args.snippets)))
            return 0
        snippets = select(store, args.snippets)
        if args.check or args.list:
            named = named_targets(store, args.target)
            items = plan(store, snippets, tuple(named) or store.targets.names)
            if args.shard:
                items = in_shard(items, published, snippets, args.shard)
            if args.list:
                show_list(items, lessons.load(store.root))
                print(kinds.this_machine(store.targets), file=sys.stderr)  # the table stays a table
                return 0
            return check(items, args.strict, store, this_python(store.root))
        if args.compare:
            return do_compare(args, published, snippets, made)
        return do_record(args, store, published, snippets, made)
    except (SnippetError, UsageError, BundleError, TargetError, RecordingError, lessons.LessonError,
            kinds.MachineRefused) as exc:
        print(f"record_runs.py: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nrecord_runs.py: interrupted; recordings finished before it are kept.", file=sys.stderr)
        if args.bundle:
            try:
                save_bundle(args.bundle, made)
            except (OSError, BundleError) as exc:
                print(f"record_runs.py: could not write the bundle: {exc}", file=sys.stderr)
        return 130
