"""The recorder's command line: parse the options, do the one command they ask for, report
what went wrong in one line. Standard library only.

Importing this module must stay cheap: with nothing stale, a run reads file hashes and
JSON and exits without starting torch.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from pathlib import Path

from ..config import lessons, settings
from ..config.schema import ConfigError
from ..config.targets import TargetError
from ..model.escape import SafeStream
from ..model.files import WriteFailed, locked
from ..model.recording import Recording, RecordingError
from ..model.snippets import SnippetError
from ..model.store import Store
from ..recorder import admit, sandbox
from ..recorder.bundles import BundleError
from ..recorder.choose import ChoiceError
from ..recorder.sandbox import ALLOW_UNSANDBOXED, SandboxUnavailable
from .bundle_import import do_import
from .check import do_check_or_list
from .compare import do_compare
from .options import Options, UsageError, parse_args, program
from .record import do_record, save_bundle, select
from .store_tools import do_adopt, do_upgrade


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI sends a cancelled job), met as Ctrl-C is: the run ends cleanly."""


def _terminate(signum, frame) -> None:
    raise Terminated


def main(argv: list[str] | None = None, root: Path | None = None, prog: str | None = None) -> int:
    """The recorder for the project at root (default: the current folder). ``prog``: how it
    was started (MODULE, or a script's path as typed); messages name it.

    Everything it prints goes through text.SafeStream: a recording's text never reaches the
    terminal with its control characters. SIGTERM ends it as Ctrl-C does."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(streams[0]), SafeStream(streams[1])
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: leave SIGTERM as it is
        previous = None
    try:
        return _main(argv, root, prog)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None, root: Path | None, prog: str | None) -> int:
    root = Path(root or Path.cwd())
    name, command = program(prog, root)
    opts = parse_args(argv, name, command)
    before = os.environ.get(ALLOW_UNSANDBOXED)
    if opts.allow_unsandboxed:  # for every run this command starts, the checks' and probes' too
        os.environ[ALLOW_UNSANDBOXED] = "1"
    try:
        return _run(opts, root, name)
    finally:
        if before is None:
            os.environ.pop(ALLOW_UNSANDBOXED, None)
        else:
            os.environ[ALLOW_UNSANDBOXED] = before


def _run(opts: Options, root: Path, name: str) -> int:
    made: list[Recording] = []
    try:
        published = Store(root)
        if opts.runs is None:
            opts = dataclasses.replace(opts, runs=settings.load(root).runs)
    except ConfigError as exc:
        print(f"{name}: {exc} Nothing was run or written.", file=sys.stderr)
        return 2
    try:
        return dispatch(opts, published, made)
    except (
        SnippetError,
        UsageError,
        ChoiceError,
        BundleError,
        TargetError,
        RecordingError,
        lessons.LessonError,
        admit.MachineRefused,
        SandboxUnavailable,
    ) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except WriteFailed as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        _keep(opts, made, name)
        return 1
    except KeyboardInterrupt as exc:
        how, code = ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
        n = len(made)
        print(
            f"\n{name}: {how}; recordings finished before it are kept ({n})"
            + (f" and bundled in {opts.bundle}" if opts.bundle else "")
            + "; the run in progress was stopped, its processes ended and its temporary folder removed.",
            file=sys.stderr,
        )
        _keep(opts, made, name)
        return code


def dispatch(opts: Options, published: Store, made: list[Recording]) -> int:
    """Do what the options ask, in the project of ``published`` (its recordings/); each
    recording made is appended to ``made`` as it is written. Raises what cli.main reports."""
    if opts.out:
        out = Path(opts.out)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {opts.out}: exists and is not a folder.")
    store = Store(published.root, Path(opts.out), published.targets) if opts.out else published
    if opts.mode in ("record", "compare"):
        sandbox.required()  # before anything is planned or said: SandboxUnavailable, in one line
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


def _keep(opts: Options, made: list[Recording], name: str) -> None:
    """Bundle what was made before a run was cut short, when a bundle was asked for."""
    if opts.bundle:
        try:
            save_bundle(opts.bundle, made)
        except (OSError, BundleError) as exc:
            print(f"{name}: could not write the bundle: {exc}", file=sys.stderr)
