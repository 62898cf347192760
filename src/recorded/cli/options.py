"""The recorder's arguments, parsed and checked once into ``Options``, and how the user started it."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
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
    #: The recorder as the user started it, for message prefixes ("scripts/record_runs.py"),
    #: and as a command to type again, interpreter included, for fix lines.
    prog: str = SCRIPT
    command: str = f"python {SCRIPT}"


#: The --help examples; {prog} is the recorder as the user started it. Each command stands
#: on its own line, so a long one (`.venv/bin/python -m recorded`) cannot break the layout.
EPILOG = """\
examples:
  {prog}
      record what is missing, stale or failed, on every target this machine can run (the
      targets live in pyproject.toml; a target whose check fails here is skipped, with the
      reason)
  {prog} --target cpu-avx2
      record on one target only (--target cpu,cpu-avx2: on those two)
  {prog} my_lesson/02_topic.py
      record one snippet if it is missing, stale or failed (a fresh one is not re-run; add
      --force for that)
  {prog} --check
      list missing, stale and failed recordings; exit 1 if any that must be fresh (targets
      marked required always, the others with --strict)
  {prog} --list
      every snippet and target, with state and last duration

hardware runners in CI:
  {prog} --target NAME --bundle NAME.json
      record as usual, and also write every recording this run made into one file (an
      empty bundle when nothing needed recording), to upload as an artifact
  {prog} --shard 2/3 --bundle part2.json
      take the second third of the snippets: the split is balanced by the durations
      recorded in recordings/, is the same on every runner, and the 3 shards cover every
      snippet exactly once (--list/--check --shard show one shard's part)
  {prog} --force --out scratch/ --bundle out/ --budget 420
      every snippet on every kind this machine is, into one bundle in out/ named for its
      kinds, machine and date, recordings/ untouched; the runs that fit 420 s by the stored
      durations, what renews most first (`make device-record` on a lent GPU machine)
  {prog} --import cpu.json other.json
      merge bundles into recordings/, each all or nothing: a bundle that is damaged, names
      an unknown snippet or target, or holds a recording of an older version of a snippet
      is refused; a failed run never replaces a good recording; importing a bundle twice
      changes nothing. Exit 1 if anything was refused
  {prog} --import old.json --allow-stale
      import recordings of an earlier version of a snippet's code anyway; the site shows
      them labelled as such, and --check lists them

readers:
  {prog} --compare my_lesson/06_timing.py
      run snippets here, without touching recordings/, and print this machine's verdict
      lines (": True"/": False") and timings beside each target's published ones
  {prog} --compare --out mine/
      the same, and keep this machine's recordings in mine/<target>/... (the layout of
      recordings/)
  {prog} --out mine/
      record into mine/ instead of recordings/; only what is missing, stale or failed there
      runs

exit status: 0 done; 1 a run failed, something must be recorded (--check) or a bundle was
refused (--import); 2 bad usage (nothing was run or written)
"""

#: Each option's help, by its dest; argparse reflows it.
HELP = {
    "snippets": "snippet paths (under snippets/, or with the snippets/ prefix); default: all. A named "
    "snippet runs only if its recording is missing, stale or failed, unless --force",
    "target": "a target from pyproject.toml ([tool.recorded.targets.NAME]), or several separated by commas; "
    "'all': every target this machine can run (the default when recording); 'auto': the first of "
    "[tool.recorded] auto that this machine can run (the default with --compare)",
    "force": "re-record even fresh recordings",
    "replace_machine": "with --target: re-record its whole tab here, replacing another machine's",
    "timeout": "per-snippet limit (default: the snippet's own, else 300)",
    "fail_fast": "stop at the first failed run",
    "refuse_busy": "the default: do not record a timing snippet (metadata timing = true) while other work "
    "uses more than a quarter of the CPUs, before or after a run",
    "keep_busy": "keep a timing snippet's run even when other work used more than a quarter of the CPUs "
    "around it (the recording says how busy the machine was)",
    "runs": "how many times to run each timing snippet, each in a fresh process (default: [tool.recorded] "
    "runs in pyproject.toml, else 3); the page shows how many runs gave each verdict",
    "check": "run nothing; list missing, stale and failed recordings",
    "list": "run nothing; show every snippet and target with its state",
    "compare": "run the snippets here without touching recordings/ and print this machine's verdict and "
    "timing lines beside the published ones",
    "adopt": "move recordings/FROM/ to target TO, each only if its machine fits TO",
    "upgrade": "run nothing; rewrite every recording in recordings/ (or --out) in this version's schema",
    "files": "merge bundles (from --bundle) into recordings/, each all or nothing",
    "strict": "with --check: every target's recordings must be fresh, not only those marked required "
    "(the release rule)",
    "bundle": "also write every recording this run made into FILE (atomically); a folder (an existing one, "
    "or a path ending in /): into a file there named for the kinds, the machine and the date",
    "allow_unsandboxed": "where bubblewrap cannot make a sandbox (not installed, user namespaces off), run "
    "snippets without one: they can then write wherever you can. Without it such a machine records nothing",
    "budget": "record only what fits in this many seconds by the durations recordings/ stores: what is "
    "missing, stale or failed first, a device's target first, then the oldest; the rest is said and left",
    "max_bundle_mb": f"with --import: read no bundle larger than this (default {MAX_BUNDLE_MB:g} MB)",
    "allow_stale": "with --import: import recordings of an earlier version of a snippet's code, shown "
    "labelled as such",
    "shard": "take only shard I of N: the snippets split across N runners, balanced by their recorded "
    "durations",
    "out": "use DIR instead of recordings/ (DIR/<target>/<snippet>.json): to record into, or with --compare "
    "to keep this machine's runs",
}


def program(started: str | None, root: Path) -> tuple[str, str]:
    """The recorder's name for messages (``scripts/record_runs.py``, ``python -m recorded``) and
    the command to type again, interpreter included. ``started``: MODULE, a script's path as
    typed (sys.argv[0]), or None (a caller in Python: the documented script)."""
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
    p.add_argument("snippets", nargs="*", metavar="SNIPPET", help=HELP["snippets"])
    p.add_argument("--target", metavar="NAME", help=HELP["target"])
    p.add_argument("--force", action="store_true", help=HELP["force"])
    p.add_argument("--replace-machine", action="store_true", help=HELP["replace_machine"])
    p.add_argument("--timeout", type=float, metavar="SECONDS", help=HELP["timeout"])
    p.add_argument("--fail-fast", action="store_true", help=HELP["fail_fast"])
    busy = p.add_mutually_exclusive_group()
    busy.add_argument("--refuse-busy", action="store_true", default=True, help=HELP["refuse_busy"])
    busy.add_argument("--keep-busy", action="store_false", dest="refuse_busy", help=HELP["keep_busy"])
    p.add_argument("--runs", type=int, metavar="N", help=HELP["runs"])
    modes = p.add_mutually_exclusive_group()  # what to do instead of recording
    for mode in ("check", "list", "compare"):
        modes.add_argument(f"--{mode}", dest="mode", action="store_const", const=mode, help=HELP[mode])
    modes.add_argument("--adopt", nargs=2, metavar=("FROM", "TO"), help=HELP["adopt"])
    modes.add_argument("--upgrade", dest="mode", action="store_const", const="upgrade", help=HELP["upgrade"])
    modes.add_argument("--import", dest="files", nargs="+", metavar="FILE", help=HELP["files"])
    p.add_argument("--strict", action="store_true", help=HELP["strict"])
    p.add_argument("--bundle", metavar="FILE", help=HELP["bundle"])
    p.add_argument("--allow-unsandboxed", action="store_true", help=HELP["allow_unsandboxed"])
    p.add_argument("--budget", type=float, metavar="SECONDS", help=HELP["budget"])
    p.add_argument(
        "--max-bundle-mb", type=float, default=MAX_BUNDLE_MB, metavar="MB", help=HELP["max_bundle_mb"]
    )
    p.add_argument("--allow-stale", action="store_true", help=HELP["allow_stale"])
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
    if args.timeout is not None and args.timeout <= 0:
        p.error("--timeout takes a positive number of seconds")
    if args.runs is not None and not 1 <= args.runs <= MAX_RUNS:
        p.error(f"--runs takes a whole number from 1 to {MAX_RUNS}")
    if args.bundle and args.mode in ("check", "list", "import"):
        p.error("--bundle goes with a run that records (or --compare), not with --check, --list or --import")
    if args.allow_stale and args.mode != "import":
        p.error("--allow-stale goes with --import")
    if args.budget is not None and args.budget <= 0:
        p.error("--budget takes a positive number of seconds")
    if args.max_bundle_mb <= 0:
        p.error("--max-bundle-mb takes a positive number of megabytes")
    if args.files and args.snippets:
        p.error("--import takes bundle files only; the snippets they hold are imported")
    if args.replace_machine and (args.target in (None, "all", "auto") or args.snippets):
        p.error("--replace-machine takes --target NAME and no snippets: it re-records every snippet")
    if args.files and args.shard:
        p.error("--shard goes with recording, --compare, --check or --list, not with --import")
