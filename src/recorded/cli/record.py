"""`record_runs.py` (and ``--out``): record what is missing, stale or failed on the chosen
targets. Standard library only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..model.recording import Recording
from ..model.snippets import Snippet, discover, load
from ..model.store import State, Status, Store
from ..recorder import admit, budget, shard
from ..recorder.bundles import bundle_name, write_bundle
from ..recorder.choose import ALL, choose
from ..recorder.record import plan, record, to_run
from .check import in_parts, say_part
from .options import Options, UsageError


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
    """Write the bundle; into a folder (one that exists, or a path ending in /), under a name
    that says what it holds."""
    if path is None:
        return
    where = Path(path)
    if where.is_dir() or path.endswith(("/", "\\")):
        where = where / bundle_name(made)
    write_bundle(where, made)
    n = len(made)
    print(f"bundle {where}: {n} recording{'s' * (n != 1)}", file=sys.stderr)


def do_record(
    opts: Options, store: Store, published: Store, snippets: list[Snippet], made: list[Recording]
) -> int:
    """Record on the named targets, on every target this machine can run, or on the auto one."""
    parts: dict[str, shard.Shard] = {}  # each target's shard, computed once
    planned: dict[str, list[Status]] = {}

    def items_for(t: str) -> list[Status]:
        if t not in planned:
            planned[t] = plan(store, snippets, (t,))
            if opts.shard:
                parts[t] = shard.take(published, snippets, t, opts.shard)
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

    plan_ = budget.fit(
        published,
        [i for n in choice.chosen for i in to_run(items_for(n), opts.force)],
        opts.runs or 1,
        opts.budget,
    )
    _say_plan(plan_, opts.budget)
    kept = {(i.snippet.name, i.target) for i in plan_.kept}
    failed_runs = 0
    for name in choice.chosen:
        items = items_for(name)
        work = [i for i in to_run(items, opts.force) if (i.snippet.name, i.target) in kept]
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

        def record_into(into: Store, work: list[Status], admits) -> tuple[list[Recording], list[Status]]:
            return record(
                into,
                work,
                timeout=opts.timeout,
                fail_fast=opts.fail_fast,
                admit=admits,
                on_run=None if opts.replace_machine else keep,
                refuse_busy=opts.refuse_busy,
                runs=opts.runs or 1,
            )

        try:
            if opts.replace_machine:
                made.extend(admit.replace_machine(store, snippets, name, record_into))
                failed: list[Status] = []
            else:
                _, failed = record_into(
                    store, work, lambda t, info: admit.admit(store, t, info, opts.command)
                )
        except admit.MachineRefused as exc:
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


def _say_plan(plan_: budget.Plan, seconds: float | None) -> None:
    """Before the first run: how long the runs will take, and what a budget leaves out."""
    if not plan_.kept and not plan_.left:
        return
    guessed = f", {plan_.guessed} never recorded counted as the longest" if plan_.guessed else ""
    targets = ", ".join(dict.fromkeys(i.target for i in plan_.kept))
    print(
        f"to record: {len(plan_.kept)} snippet{'s' * (len(plan_.kept) != 1)} on {targets or 'no target'}, "
        f"about {plan_.seconds:.0f} s by the stored durations{guessed}"
        + (f" (budget {seconds:g} s)" if seconds is not None else ""),
        file=sys.stderr,
    )
    if plan_.left:
        left = "; ".join(f"{i.snippet.name} on {i.target}" for i in plan_.left)
        print(f"left for another machine, over the budget: {left}", file=sys.stderr)
