"""The recorder's arguments, parsed and checked once into ``Options``, and how the user started it."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..config.settings import MAX_RUNS
from ..model.store import this_python
from ..recorder.bundles import MAX_BUNDLE_MB

#: What ``main(prog=...)`` takes for `python -m recorded`; a script passes its own path.
MODULE = "-m"
SCRIPT = "scripts/record_runs.py"


class UsageError(Exception):
    """Bad input: printed as it is, exit status 2."""


@dataclass(frozen=True)
class Options:
    """What the user asked for (parse_args); each field is the option of its name."""

    mode: str = "record"
    snippets: tuple[str, ...] = ()
    target: str | None = None  # names ("cpu,cpu-avx2"), "all" or "auto"; None: the mode's default
    force: bool = False
    replace_machine: bool = False
    timeout: float | None = None
    fail_fast: bool = False
    refuse_busy: bool = True
    runs: int | None = None  # None: the project's setting
    strict: bool = False
    bundle: str | None = None
    allow_stale: bool = False
    shard: tuple[int, int] | None = None
    out: str | None = None
    adopt: tuple[str, str] | None = None
    files: tuple[str, ...] = ()  # --import's bundles
    max_bundle_mb: float = MAX_BUNDLE_MB
    budget: float | None = None
    allow_unsandboxed: bool = False
    prog: str = SCRIPT  # the recorder as started, for message prefixes ("scripts/record_runs.py")
    command: str = f"python {SCRIPT}"  # the same to type again, interpreter included, for fix lines


#: The --help examples; {prog} is the recorder as started. Each command stands on its own line,
#: so a long one (`.venv/bin/python -m recorded`) cannot break the layout.
EPILOG = """\
examples:
  {prog}
      record what is missing, stale or failed on every target this machine can run (a target
      whose check fails here is skipped, with the reason)
  {prog} my_lesson/02_topic.py
      record it if missing, stale or failed (a fresh one is not re-run; add --force for that)
  {prog} --check
      list what must be recorded; exit 1 if a recording that must be fresh is not (see --strict)

hardware runners in CI:
  {prog} --target NAME --bundle NAME.json
      record as usual, and write what it recorded into one file to upload (empty if nothing was)
  {prog} --shard 2/3 --bundle part2.json
      the second of 3 shards, the same on every runner; the 3 cover every snippet exactly once
  {prog} --force --out scratch/ --bundle out/ --budget 420
      every kind this machine is, into one bundle in out/: the runs that fit 420 s by the stored
      durations (make device-record)
  {prog} --import cpu.json other.json
      merge bundles, each all or nothing: one that is damaged, names an unknown snippet or target,
      or holds an older version of a snippet is refused; a failed run never replaces a good
      recording; importing a bundle twice changes nothing

readers:
  {prog} --compare my_lesson/06_timing.py
      run a snippet here and print its verdicts and timings beside each target's published ones

exit status: 0 done; 1 a run failed, something must be recorded (--check) or a bundle was
refused (--import); 2 bad usage (nothing was run or written)
"""

#: Each option's help, by its dest (the short ones are where they are declared); argparse reflows it.
HELP = {
    "snippets": "snippet paths under snippets/ (default: all); each runs only if missing, stale or failed, unless --force",
    "target": "a target of pyproject.toml, or several, comma-separated; 'all': each this machine can "
    "run (the default when recording); 'auto': the first of [tool.recorded] auto it can run (the default "
    "with --compare)",
    "timeout": "per-snippet limit (default: the snippet's own, else 300)",
    "refuse_busy": "the default: record no timing snippet while other work uses over a quarter of the CPUs",
    "keep_busy": "keep such a timing run anyway (the recording says how busy the machine was)",
    "runs": "how many fresh processes run each timing snippet (default: [tool.recorded] runs, else 3)",
    "compare": "run the snippets here, recordings/ untouched, and print this machine's verdicts and "
    "timings beside the published ones",
    "adopt": "move recordings/FROM/ to target TO, each only if its machine fits TO",
    "upgrade": "run nothing; rewrite every recording in recordings/ (or --out) in this version's schema",
    "files": "merge bundles (from --bundle) into recordings/, each all or nothing",
    "strict": "with --check: every target must be fresh, not only those marked required (the release rule)",
    "bundle": "also write every recording made into FILE; into a folder (existing, or ending in /): a "
    "file named for the kinds, the machine and the date",
    "allow_unsandboxed": "where bubblewrap cannot sandbox, run snippets unsandboxed, able to write wherever "
    "you can (without it, such a machine records nothing)",
    "budget": "record only what fits this many seconds by the stored durations, what renews most first",
    "allow_stale": "with --import: also import recordings of an earlier version of a snippet, so labelled",
    "shard": "take only shard I of N: the snippets split across N runners by recorded durations (with "
    "--list or --check: show that shard's part)",
    "out": "record into DIR/<target>/<snippet>.json instead of recordings/ (--compare: keep its runs there)",
}


def program(started: str | None, root: Path) -> tuple[str, str]:
    """The recorder's name for messages and the command to type again, interpreter included.
    ``started``: MODULE, a script's path as typed (sys.argv[0]), or None (the documented script)."""
    python = this_python(root)
    if started == MODULE:
        return f"{python} -m recorded", f"{python} -m recorded"
    script = Path(started or SCRIPT)
    if script.is_absolute() and script.resolve().is_relative_to(root.resolve()):
        script = script.resolve().relative_to(root.resolve())  # else a script outside: its full path
    return script.as_posix(), f"{python} {script.as_posix()}"


def _shard_arg(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give I/N with 1 <= I <= N, such as 1/2 (the first of two runners)"
        )
    return int(m[1]), int(m[2])


def parse_args(argv: list[str] | None, prog: str = SCRIPT, command: str = f"python {SCRIPT}") -> Options:
    """The options, or exit status 2 with argparse's message (nothing was run or written)."""
    p = argparse.ArgumentParser(
        prog=prog,
        description="Run the snippets of every lesson and record what they print, per target.",
        epilog=EPILOG.format(prog=prog),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    flag = partial(p.add_argument, action="store_true")
    p.add_argument("snippets", nargs="*", metavar="SNIPPET", help=HELP["snippets"])
    p.add_argument("--target", metavar="NAME", help=HELP["target"])
    flag("--force", help="re-record even fresh recordings")
    flag("--replace-machine", help="with --target: re-record its whole tab here, replacing another machine's")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help=HELP["timeout"])
    flag("--fail-fast", help="stop at the first failed run")
    busy = p.add_mutually_exclusive_group()
    busy.add_argument("--refuse-busy", action="store_true", default=True, help=HELP["refuse_busy"])
    busy.add_argument("--keep-busy", action="store_false", dest="refuse_busy", help=HELP["keep_busy"])
    p.add_argument("--runs", type=int, metavar="N", help=HELP["runs"])
    modes = p.add_mutually_exclusive_group()  # what to do instead of recording
    mode = partial(modes.add_argument, dest="mode", action="store_const")
    mode("--check", const="check", help="run nothing; list missing, stale and failed recordings")
    mode("--list", const="list", help="run nothing; show every snippet and target with its state")
    mode("--compare", const="compare", help=HELP["compare"])
    modes.add_argument("--adopt", nargs=2, metavar=("FROM", "TO"), help=HELP["adopt"])
    mode("--upgrade", const="upgrade", help=HELP["upgrade"])
    modes.add_argument("--import", dest="files", nargs="+", metavar="FILE", help=HELP["files"])
    flag("--strict", help=HELP["strict"])
    p.add_argument("--bundle", metavar="FILE", help=HELP["bundle"])
    flag("--allow-unsandboxed", help=HELP["allow_unsandboxed"])
    p.add_argument("--budget", type=float, metavar="SECONDS", help=HELP["budget"])
    limit = f"with --import: read no bundle larger than this (default {MAX_BUNDLE_MB:g} MB)"
    p.add_argument("--max-bundle-mb", type=float, default=MAX_BUNDLE_MB, metavar="MB", help=limit)
    flag("--allow-stale", help=HELP["allow_stale"])
    p.add_argument("--shard", type=_shard_arg, metavar="I/N", help=HELP["shard"])
    p.add_argument("--out", metavar="DIR", help=HELP["out"])
    args = p.parse_args(argv)
    args.mode = "adopt" if args.adopt else "import" if args.files else args.mode or "record"
    _refuse_combinations(p, args)
    args.snippets, args.files = tuple(args.snippets), tuple(args.files or ())
    args.adopt = tuple(args.adopt) if args.adopt else None
    return Options(**vars(args), prog=prog, command=command)


def _refuse_combinations(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit status 2, with argparse's message, for values and combinations that make no sense."""
    for name, unit in (("timeout", "seconds"), ("budget", "seconds"), ("max_bundle_mb", "megabytes")):
        if (value := getattr(args, name)) is not None and value <= 0:
            p.error(f"--{name.replace('_', '-')} takes a positive number of {unit}")
    if args.runs is not None and not 1 <= args.runs <= MAX_RUNS:
        p.error(f"--runs takes a whole number from 1 to {MAX_RUNS}")
    if args.bundle and args.mode in ("check", "list", "import"):
        p.error("--bundle goes with a run that records (or --compare), not with --check, --list or --import")
    if args.allow_stale and args.mode != "import":
        p.error("--allow-stale goes with --import")
    if args.files and args.snippets:
        p.error("--import takes bundle files only; the snippets they hold are imported")
    if args.replace_machine and (args.target in (None, "all", "auto") or args.snippets):
        p.error("--replace-machine takes --target NAME and no snippets: it re-records every snippet")
    if args.replace_machine and (args.budget is not None or args.shard):
        p.error("--replace-machine re-records a whole tab on one machine; drop --budget and --shard")
    if args.files and args.shard:
        p.error("--shard goes with recording, --compare, --check or --list, not with --import")
