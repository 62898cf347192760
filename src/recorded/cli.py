"""The command line of scripts/record_runs.py. Standard library only.

Importing this module must stay cheap: with nothing stale, a run reads file hashes and
JSON and exits without starting torch.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import provenance, runner
from .record import TO_RECORD, plan, record, to_run
from .snippets import TARGETS, SnippetError, discover, load
from .store import State, Store, record_command

EPILOG = """\
examples:
  record_runs.py                      record what is missing or stale, on this machine's target
  record_runs.py making_it_fast/02_float16_limits.py
                                      (re-)record one snippet
  record_runs.py --check              list missing, stale and failed recordings; exit 1 if any
                                      that must be fresh (CPU always; CUDA with --strict)
  record_runs.py --list               every snippet and target, with state and last duration
"""


class UsageError(Exception):
    """Bad input: printed as it is, exit status 2."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="record_runs.py",
        description="Run the lesson's snippets and record what they print, per target.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("snippets", nargs="*", metavar="SNIPPET",
                   help="snippet paths (under snippets/, or with the snippets/ prefix); default: all")
    p.add_argument("--target", choices=[*TARGETS, "auto"], default=None,
                   help="where to record: cpu, cuda, or auto (cuda when a usable GPU is "
                        "present, else cpu; the default when recording)")
    p.add_argument("--force", action="store_true", help="re-record even fresh recordings")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="per-snippet limit (default: the snippet's own, else 300)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="run nothing; list missing, stale and failed recordings")
    mode.add_argument("--list", action="store_true",
                      help="run nothing; show every snippet and target with its state")
    p.add_argument("--strict", action="store_true",
                   help="with --check: CUDA recordings must be fresh too (the release rule)")
    args = p.parse_args(argv)
    if args.timeout is not None and args.timeout <= 0:
        p.error("--timeout takes a positive number of seconds")
    return args


def select(store: Store, names: list[str]):
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


def no_cuda(problem: str) -> UsageError:
    return UsageError(f"--target cuda: {problem}. Nothing was recorded. "
                      "Record on a machine with an NVIDIA GPU, or use --target cpu.")


def show_list(items) -> None:
    width = max((len(i.snippet.name) for i in items), default=10)
    print(f"{'snippet':<{width}}  target  {'state':<14}  {'last run':>8}  recorded at")
    for i in items:
        rec = i.recording
        secs = f"{rec.duration_s:.1f} s" if rec else "-"
        when = rec.recorded_at if rec else "-"
        print(f"{i.snippet.name:<{width}}  {i.target:<6}  {i.state.value:<14}  {secs:>8}  {when}")


def check(items, strict: bool) -> int:
    problems = [i for i in items if i.state in TO_RECORD]
    required = [i for i in problems if i.target == "cpu" or strict]
    for i in problems:
        mark = "error" if i in required else "note "
        print(f"{mark} {i.snippet.name} on {i.target}: {i.state.value} ({i.reason.splitlines()[0]})\n"
              f"      fix: {record_command(i.snippet.name, i.target)}")
    fresh = sum(i.state is State.FRESH for i in items)
    print(f"{fresh} fresh, {len(problems)} to record ({len(required)} required), "
          f"{sum(i.state is State.NOT_APPLICABLE for i in items)} not applicable")
    return 1 if required else 0


def main(argv: list[str] | None = None, root: Path | None = None) -> int:
    args = parse_args(argv)
    store = Store(root or Path.cwd())
    try:
        snippets = select(store, args.snippets)
        if args.check or args.list:
            targets = (args.target,) if args.target in TARGETS else TARGETS
            items = plan(store, snippets, targets)
            if args.list:
                show_list(items)
                return 0
            return check(items, args.strict)
        requested = args.target or "auto"
        if requested == "cpu" or (requested == "auto" and not provenance.nvidia_present()):
            target = "cpu"
        elif not provenance.nvidia_present():
            raise no_cuda(cuda_problem())
        else:
            target = "cuda"  # confirmed below by a probe, and only if there is work
        items = plan(store, snippets, (target,))
        work = to_run(items, args.force)
        if work and target == "cuda" and (problem := cuda_problem()):
            if requested == "cuda":
                raise no_cuda(problem)
            target = "cpu"
            items = plan(store, snippets, (target,))
            work = to_run(items, args.force)
        skipped = [i for i in items if i.state is State.NOT_APPLICABLE]
        if not work:
            print(f"nothing to record on {target}: {len(items) - len(skipped)} fresh"
                  + (f", {len(skipped)} not applicable" if skipped else ""), file=sys.stderr)
            return 0
        made, failed = record(store, work, timeout=args.timeout, fail_fast=args.fail_fast)
    except (SnippetError, UsageError) as exc:
        print(f"record_runs.py: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nrecord_runs.py: interrupted; recordings finished before it are kept.", file=sys.stderr)
        return 130
    print(f"recorded {len(made)} of {len(work)} on {target}"
          + (f"; {len(failed)} failed" if failed else ""), file=sys.stderr)
    return 1 if failed else 0
