"""The recorder's command line: parse the options, do the one command they ask for, report what
went wrong in one line. Importing it stays cheap: with nothing stale, a run never starts torch."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from .. import Terminated, terminate
from ..config import settings
from ..config.schema import ConfigError
from ..model.escape import SafeStream
from ..model.files import WriteFailed, locked, write_atomically
from ..model.recording import SCHEMA_VERSION, Recording, RecordingError
from ..model.snippets import SnippetError
from ..model.store import Store
from ..recorder import admit, sandbox
from ..recorder.bundles import BundleError
from ..recorder.choose import ChoiceError
from ..recorder.sandbox import ALLOW_UNSANDBOXED, SandboxUnavailable
from .bundle_import import do_import
from .compare import do_compare
from .options import Options, UsageError, parse_args, program
from .record import do_record, save_bundle, select
from .report import do_report

#: What the recorder reports in one line, exit status 2.
REPORTED = (
    SnippetError,
    UsageError,
    ChoiceError,
    BundleError,
    RecordingError,
    ConfigError,  # the project's declarations (targets, lessons), read as they are needed
    admit.MachineRefused,
    SandboxUnavailable,
)


def main(argv: list[str] | None = None, root: Path | None = None, prog: str | None = None) -> int:
    """The recorder for the project at root (default: the current folder); messages name ``prog``.
    All it prints goes through SafeStream: no recording's control characters reach the terminal."""
    with redirect_stdout(SafeStream(sys.stdout)), redirect_stderr(SafeStream(sys.stderr)):
        try:
            previous = signal.signal(signal.SIGTERM, terminate)
        except ValueError:  # not the main thread: leave SIGTERM as it is
            previous = None
        unsandboxed = os.environ.get(ALLOW_UNSANDBOXED)
        try:
            root = Path(root or Path.cwd())
            opts = parse_args(argv, *program(prog, root))
            if opts.allow_unsandboxed:  # for every run this command starts, the checks' and probes' too
                os.environ[ALLOW_UNSANDBOXED] = "1"
            return _run(opts, root)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
            os.environ.pop(ALLOW_UNSANDBOXED, None)
            if unsandboxed is not None:
                os.environ[ALLOW_UNSANDBOXED] = unsandboxed


def _run(opts: Options, root: Path) -> int:
    made: list[Recording] = []
    try:
        published = Store(root)
        if opts.runs is None:
            opts = dataclasses.replace(opts, runs=settings.load(root).runs)
    except ConfigError as exc:
        print(f"{opts.prog}: {exc} Nothing was run or written.", file=sys.stderr)
        return 2
    try:
        return dispatch(opts, published, made)
    except REPORTED as exc:
        print(f"{opts.prog}: {exc}", file=sys.stderr)
        return 2
    except WriteFailed as exc:
        print(f"{opts.prog}: {exc}", file=sys.stderr)
        _keep(opts, made)
        return 1
    except KeyboardInterrupt as exc:
        how, code = ("terminated (SIGTERM)", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
        print(
            f"\n{opts.prog}: {how}; recordings finished before it are kept ({len(made)})"
            + (f" and bundled in {opts.bundle}" if opts.bundle else "")
            + "; the run in progress was stopped, its processes ended and its temporary folder removed.",
            file=sys.stderr,
        )
        _keep(opts, made)
        return code


def dispatch(opts: Options, published: Store, made: list[Recording]) -> int:
    """Do what the options ask, in the project of ``published`` (its recordings/); each
    recording made is appended to ``made`` as it is written. Raises what cli.main reports."""
    if opts.out and Path(opts.out).exists() and not Path(opts.out).is_dir():
        raise UsageError(f"--out {opts.out}: exists and is not a folder.")
    store = Store(published.root, Path(opts.out), published.targets) if opts.out else published
    if opts.mode in ("record", "compare"):
        sandbox.required()  # before anything is planned or said: SandboxUnavailable, in one line
    if opts.mode in ("check", "list"):
        return do_report(opts, store, published, select(store, opts.snippets))
    if opts.mode == "compare" and not opts.out:  # its runs go to a scratch store
        return do_compare(opts, published, select(store, opts.snippets), made)
    # Whatever writes recordings holds the store's lock: two at once take turns.
    with locked(store.recordings_dir, f"{opts.prog}, {opts.mode}", say=lambda s: print(s, file=sys.stderr)):
        if opts.mode == "import":
            return do_import(opts, store)
        if opts.mode == "adopt":
            assert opts.adopt is not None
            print("\n".join(admit.adopt(store, *opts.adopt, list(opts.snippets))))
            return 0
        if opts.mode == "upgrade":
            return _upgrade(store)
        snippets = select(store, opts.snippets)
        if opts.mode == "compare":
            return do_compare(opts, published, snippets, made)
        return do_record(opts, store, published, snippets, made)


def _upgrade(store: Store) -> int:
    """Every recording in this version's schema (recording.migrate); one that cannot be read is said."""
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
        earlier = " (recorded with an earlier version of the code, which it does not hold)"
        print(f"upgraded   {store.shown(path)}{'' if rec.code_sha256 else earlier}")
    print(f"{upgraded} upgraded to schema {SCHEMA_VERSION}, {current} already current")
    return 0


def _keep(opts: Options, made: list[Recording]) -> None:
    """Bundle what was made before a run was cut short, when a bundle was asked for."""
    if opts.bundle:
        try:
            save_bundle(opts.bundle, made)
        except (OSError, BundleError) as exc:
            print(f"{opts.prog}: could not write the bundle: {exc}", file=sys.stderr)
