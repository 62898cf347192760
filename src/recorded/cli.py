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

from . import describe, provenance, runner
from .bundles import BundleError, import_bundles, write_bundle
from .record import TO_RECORD, Item, plan, record, shard, shard_weights, to_run
from .snippets import TARGETS, Snippet, SnippetError, discover, load
from .store import Recording, State, Store, record_command, this_python

EPILOG = """\
examples:
  record_runs.py                      record what is missing, stale or failed, on this
                                      machine's target
  record_runs.py making_it_fast/02_float16_limits.py
                                      record one snippet if it is missing, stale or failed
                                      (a fresh one is not re-run; add --force for that)
  record_runs.py --check              list missing, stale and failed recordings; exit 1 if any
                                      that must be fresh (CPU always; CUDA with --strict)
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
  record_runs.py --compare making_it_fast/06_measure_cpu.py
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
        description="Run the lesson's snippets and record what they print, per target.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("snippets", nargs="*", metavar="SNIPPET",
                   help="snippet paths (under snippets/, or with the snippets/ prefix); default: all. "
                        "A named snippet runs only if its recording is missing, stale or failed, "
                        "unless --force")
    p.add_argument("--target", choices=[*TARGETS, "auto"], default=None,
                   help="where to record: cpu, cuda, or auto (cuda when a usable GPU is "
                        "present, else cpu; the default when recording or comparing)")
    p.add_argument("--force", action="store_true", help="re-record even fresh recordings")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="per-snippet limit (default: the snippet's own, else 300)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="run nothing; list missing, stale and failed recordings")
    mode.add_argument("--list", action="store_true",
                      help="run nothing; show every snippet and target with its state")
    mode.add_argument("--compare", action="store_true",
                      help="run the snippets here without touching recordings/ and print this "
                           "machine's verdict and timing lines beside the published ones")
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


def cuda_problem() -> str | None:
    """Why the cuda target cannot run here, or None. Starts torch only if a driver is present."""
    if not provenance.nvidia_present():
        return "no NVIDIA driver on this machine (no /proc/driver/nvidia, no nvidia-smi)"
    if not provenance.probe(runner.target_env("cuda", Path("."))).get("gpu"):
        return "torch in this interpreter sees no usable CUDA device (torch.cuda.is_available() is False)"
    return None


def no_cuda(problem: str, done: str = "recorded") -> UsageError:
    return UsageError(f"--target cuda: {problem}. Nothing was {done}. "
                      f"{'Record' if done == 'recorded' else 'Run'} on a machine with an NVIDIA GPU, "
                      "or use --target cpu.")


def first_target(requested: str, done: str = "recorded") -> str:
    """The target before any probe: cpu, or cuda when a driver is present (to be confirmed)."""
    if requested == "cpu" or (requested == "auto" and not provenance.nvidia_present()):
        return "cpu"
    if not provenance.nvidia_present():
        raise no_cuda(cuda_problem(), done)
    return "cuda"


# -- shards ------------------------------------------------------------------------------------


def shard_filter(published: Store, snippets: list[Snippet], target: str, which: tuple[int, int],
                 say: bool = True) -> set[str]:
    """The names of the snippets shard I/N takes on target, by the durations in recordings/."""
    index, count = which
    items = plan(published, snippets, (target,))
    taken = shard(items, index, count)
    if say:
        weights = shard_weights([i for i in items if i.state is not State.NOT_APPLICABLE])
        applicable = sum(i.state is not State.NOT_APPLICABLE for i in items)
        total = sum(weights.values())
        mine = sum(weights[id(i)] for i in taken)
        if any(i.last_duration is not None for i in items):
            how = f"about {mine:.0f} s of {total:.0f} s by recorded durations"
        else:
            how = f"no durations recorded on {target} yet, so each counts as 1 s"
        print(f"shard {index}/{count} on {target} takes {len(taken)} of {applicable} snippets "
              f"({how})" + (":" if taken else "."), file=sys.stderr)
        for i in taken:
            secs = f"{i.last_duration:.1f} s" if i.last_duration is not None else "no duration yet"
            print(f"  {i.snippet.name} ({secs})", file=sys.stderr)
    return {i.snippet.name for i in taken}


def in_shard(items: list[Item], published: Store, snippets: list[Snippet], which, say=True) -> list[Item]:
    targets = dict.fromkeys(i.target for i in items)
    keep = {t: shard_filter(published, snippets, t, which, say) for t in targets}
    return [i for i in items if i.snippet.name in keep[i.target]]


# -- --list and --check ------------------------------------------------------------------------


def show_list(items) -> None:
    width = max((len(i.snippet.name) for i in items), default=10)
    print(f"{'snippet':<{width}}  target  {'state':<14}  {'last run':>8}  recorded at")
    for i in items:
        rec = i.recording
        secs = f"{rec.duration_s:.1f} s" if rec else "-"
        when = rec.recorded_at if rec else "-"
        print(f"{i.snippet.name:<{width}}  {i.target:<6}  {i.state.value:<14}  {secs:>8}  {when}")


def check(items, strict: bool, python: str = "python") -> int:
    problems = [i for i in items if i.state in TO_RECORD]
    required = [i for i in problems if i.target == "cpu" or strict]
    for i in problems:
        mark = "error" if i in required else "note "
        print(f"{mark} {i.snippet.name} on {i.target}: {i.state.value} ({i.reason.splitlines()[0]})\n"
              f"      fix: {record_command(i.snippet.name, i.target, python)}")
    fresh = sum(i.state is State.FRESH for i in items)
    print(f"{fresh} fresh, {len(problems)} to record ({len(required)} required), "
          f"{sum(i.state is State.NOT_APPLICABLE for i in items)} not applicable")
    return 1 if required else 0


# -- bundles -----------------------------------------------------------------------------------


def save_bundle(path: str | None, made: list[Recording]) -> None:
    if path is None:
        return
    write_bundle(Path(path), made)
    n = len(made)
    print(f"bundle {path}: {n} recording{'s' * (n != 1)}", file=sys.stderr)


# -- recording and comparing -------------------------------------------------------------------


def do_record(args, store: Store, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    requested = args.target or "auto"
    target = first_target(requested)  # cuda is confirmed below by a probe, and only if there is work

    def items_for(t: str) -> list[Item]:
        items = plan(store, snippets, (t,))
        return in_shard(items, published, snippets, args.shard, say=False) if args.shard else items

    items = items_for(target)
    work = to_run(items, args.force)
    if work and target == "cuda" and (problem := cuda_problem()):
        if requested == "cuda":
            raise no_cuda(problem)
        target = "cpu"
        items = items_for(target)
        work = to_run(items, args.force)
    if args.shard:
        shard_filter(published, snippets, target, args.shard)  # says which snippets it takes
    skipped = [i for i in items if i.state is State.NOT_APPLICABLE]
    if not work:
        print(f"nothing to record on {target}: {len(items) - len(skipped)} fresh"
              + (f", {len(skipped)} not applicable" if skipped else "")
              + (f" in {args.out}" if args.out else ""), file=sys.stderr)
        save_bundle(args.bundle, made)
        return 0

    def keep(rec: Recording, written: bool) -> None:
        if written:
            made.append(rec)

    _, failed = record(store, work, timeout=args.timeout, fail_fast=args.fail_fast, on_run=keep)
    print(f"recorded {len(made)} of {len(work)} on {target}"
          + (f" into {args.out}" if args.out else "")
          + (f"; {len(failed)} failed" if failed else ""), file=sys.stderr)
    save_bundle(args.bundle, made)
    return 1 if failed else 0


def do_compare(args, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    from . import compare  # only --compare needs it

    requested = args.target or "auto"
    target = first_target(requested, "run")
    why_cpu = "--target cpu" if requested == "cpu" else "no NVIDIA driver on this machine"
    if target == "cuda" and snippets and (problem := cuda_problem()):
        if requested == "cuda":
            raise no_cuda(problem, "run")
        target, why_cpu = "cpu", problem
    if args.shard:
        chosen = shard_filter(published, snippets, target, args.shard)
        snippets = [s for s in snippets if s.name in chosen or not s.runs_on(target)]

    with tempfile.TemporaryDirectory(prefix="record-runs-compare-") as tmp:
        # Without --out the runs go to a scratch store that is thrown away: recordings/ is
        # never written. With --out they go to DIR, by the same rules as recording.
        store = Store(published.root, Path(args.out) if args.out else Path(tmp))
        items = plan(store, snippets, (target,))
        skipped = {i.snippet.name: f"needs {', '.join(sorted(i.snippet.requires))}, and this run is on "
                                   f"{target} ({why_cpu if target == 'cpu' else 'cuda'})"
                   for i in items if i.state is State.NOT_APPLICABLE}
        work = to_run(items, force=True)
        here: dict[str, Recording] = {}

        def keep(rec: Recording, written: bool) -> None:
            here[rec.snippet] = rec
            if written:
                made.append(rec)

        failed = []
        if work:
            _, failed = record(store, work, timeout=args.timeout, fail_fast=args.fail_fast, on_run=keep)
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
    published = Store(root)
    made: list[Recording] = []
    try:
        if args.out:
            out = Path(args.out)
            if out.exists() and not out.is_dir():
                raise UsageError(f"--out {args.out}: exists and is not a folder.")
        if args.bundle and Path(args.bundle).is_dir():
            raise UsageError(f"--bundle {args.bundle}: is a folder; name a file, such as "
                             f"{Path(args.bundle) / 'bundle.json'}.")
        store = Store(root, Path(args.out)) if args.out else published
        if args.import_:
            for name in args.import_:
                if not Path(name).is_file():
                    hint = " (--import takes bundle files only, not snippets)" if name.endswith(".py") else ""
                    raise UsageError(f"--import {name}: no such file{hint}. Nothing was imported.")
            return import_bundles(store, args.import_, args.allow_stale, sys.stdout)
        snippets = select(store, args.snippets)
        if args.check or args.list:
            targets = (args.target,) if args.target in TARGETS else TARGETS
            items = plan(store, snippets, targets)
            if args.shard:
                items = in_shard(items, published, snippets, args.shard)
            if args.list:
                show_list(items)
                return 0
            return check(items, args.strict, this_python(store.root))
        if args.compare:
            return do_compare(args, published, snippets, made)
        return do_record(args, store, published, snippets, made)
    except (SnippetError, UsageError, BundleError) as exc:
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
