"""`record_runs.py` (and ``--out``): record what is missing, stale or failed on the chosen targets."""

from __future__ import annotations

import sys
from functools import cache, partial
from pathlib import Path

from ..config.targets import Target
from ..model.recording import Recording
from ..model.snippets import Snippet, discover, load
from ..model.store import Standing, State, Store
from ..recorder import admit, budget, shard
from ..recorder.bundles import bundle_name, write_bundle
from ..recorder.choose import ALL, choose
from ..recorder.record import RunLimits, plan, record, to_run
from .options import Options, UsageError
from .report import say_shard


def select(store: Store, names: tuple[str, ...]) -> list[Snippet]:
    """The named snippets (paths as typed: ./snippets/x.py), else every one."""
    paths = [n.replace("\\", "/").removeprefix("./").removeprefix("snippets/") for n in names]
    return [load(store.snippets_dir, path) for path in paths] if names else discover(store.snippets_dir)


def cannot(store: Store, target: Target, why: str, done: str = "recorded") -> UsageError:
    others = [t.name for t in store.targets if t != target]
    return UsageError(
        f"--target {target}: {why}. Nothing was {done}. "
        f"{'Record' if done == 'recorded' else 'Run'} on a machine that is what "
        f"{target} claims ({target.description})"
        + (f", or choose another target: {', '.join(others)}." if others else ".")
    )


def save_bundle(path: str | None, made: list[Recording]) -> None:
    """Into a folder (one that exists, or a path ending in /): under a name that says what it holds."""
    if path is None:
        return
    where = Path(path)
    if where.is_dir() or path.endswith(("/", "\\")):
        where = where / bundle_name(made)
    write_bundle(where, made)
    print(f"bundle {where}: {len(made)} recording{'s' * (len(made) != 1)}", file=sys.stderr)


def record_with(opts: Options, into: Store, work: list[Standing], admits=None, on_run=None):
    """``record`` with the options' limits; ``on_run(recording, written)`` after each snippet."""
    limits = RunLimits(opts.timeout, opts.fail_fast, opts.refuse_busy, opts.runs or 1)
    return record(into, work, limits, on_run=on_run, admit=admits)


def do_record(
    opts: Options, store: Store, published: Store, snippets: list[Snippet], made: list[Recording]
) -> int:
    """Record on the named targets, on every target this machine can run, or on the auto one."""

    @cache  # each target's plan and shard, computed once
    def shard_of(t: Target) -> shard.Shard:
        assert opts.shard is not None
        return shard.take(published, snippets, t, opts.shard)

    force = opts.force or opts.replace_machine  # a replaced tab is recorded whole, with its emulations

    @cache
    def items_for(t: Target) -> list[Standing]:
        items = plan(store, snippets, store.targets.sharing(t) if opts.replace_machine else (t,))
        return [i for i in items if i.snippet.name in shard_of(t).names] if opts.shard else items

    choice = choose(
        store.targets,
        opts.target,
        ALL,
        whole_machines=opts.replace_machine,
        needed=lambda t: opts.replace_machine or bool(to_run(items_for(t), force)),
    )
    if choice.named and choice.skipped:  # asked for by name: say so, and record nothing
        raise cannot(store, *choice.skipped[0])
    for target, problem in choice.skipped:
        if work := to_run(items_for(target), force):
            print(
                f"skipped {target}: this machine cannot run it ({problem}); its {len(work)} missing "
                "or stale recordings are left for a machine that can",
                file=sys.stderr,
            )
    work = [i for t in choice.chosen for i in to_run(items_for(t), force)]
    fits = budget.fit(published, work, opts.runs or 1, opts.budget)
    _say_plan(fits, opts.budget)
    kept = {(i.snippet.name, i.target) for i in fits.kept}
    failed_runs = 0
    for target in choice.chosen:
        if opts.shard:
            say_shard(shard_of(target))
        work = [i for i in to_run(items_for(target), force) if (i.snippet.name, i.target) in kept]
        if not work and not opts.replace_machine:
            _say_nothing(opts, target, items_for(target))
            continue
        try:
            failed = _record_on(opts, store, snippets, target, work, made)
        except admit.MachineRefused as exc:
            if choice.named:
                raise
            print(f"skipped {target}: {exc}", file=sys.stderr)
            continue
        failed_runs += failed
        if failed and opts.fail_fast:
            break
    save_bundle(opts.bundle, made)
    return 1 if failed_runs else 0


def _say_plan(fits: budget.Plan, seconds: float | None) -> None:
    """Before the first run: how long the runs will take, and what a budget leaves out."""
    if fits.kept or fits.left:
        guessed = f", {fits.guessed} never recorded counted as the longest" if fits.guessed else ""
        targets = ", ".join(dict.fromkeys(i.target.name for i in fits.kept))
        print(
            f"to record: {len(fits.kept)} snippet{'s' * (len(fits.kept) != 1)} on {targets or 'no target'}, "
            f"about {fits.seconds:.0f} s by the stored durations{guessed}"
            + (f" (budget {seconds:g} s)" if seconds is not None else ""),
            file=sys.stderr,
        )
    if fits.left:
        left = "; ".join(f"{i.snippet.name} on {i.target}" for i in fits.left)
        print(f"left for another machine, over the budget: {left}", file=sys.stderr)


def _say_nothing(opts: Options, target: Target, items: list[Standing]) -> None:
    skipped = sum(i.state is State.NOT_APPLICABLE for i in items)
    print(
        f"nothing to record on {target}: {len(items) - skipped} fresh"
        + (f", {skipped} not applicable" if skipped else "")
        + (f" in {opts.out}" if opts.out else ""),
        file=sys.stderr,
    )


def _record_on(
    opts: Options,
    store: Store,
    snippets: list[Snippet],
    target: Target,
    work: list[Standing],
    made: list[Recording],
) -> int:
    """Run one target's ``work`` (or its whole tab, with --replace-machine); how many runs failed."""

    def keep(rec: Recording, written: bool) -> None:
        made.extend([rec] if written else [])

    before, failed = len(made), []
    if opts.replace_machine:  # it writes the runs, all or none, once every one succeeded
        made.extend(admit.replace_machine(store, snippets, target, partial(record_with, opts)))
    else:
        _, failed = record_with(opts, store, work, partial(admit.admit, store, command=opts.command), keep)
    where = ", ".join(map(str, store.targets.sharing(target))) if opts.replace_machine else target
    print(
        f"recorded {len(made) - before} of {len(work)} on {where}"
        + (f" into {opts.out}" if opts.out else "")
        + (f"; {len(failed)} failed" if failed else ""),
        file=sys.stderr,
    )
    return len(failed)
