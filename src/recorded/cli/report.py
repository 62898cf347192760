"""`--list` and `--check`: what is recorded, without running anything; and which snippets a shard takes."""

from __future__ import annotations

import sys
from collections import Counter

from ..config import lessons
from ..config.lessons import Lesson, lesson_of, title
from ..model import machines, renewal
from ..model.snippets import Snippet
from ..model.store import Standing, State, Store
from ..recorder import admit, shard
from ..recorder.choose import ALL, choose
from ..recorder.record import TO_RECORD, plan
from .options import Options


def say_shard(which: shard.Shard) -> None:
    """Which snippets shard I/N takes on its target, and about how long they take."""
    if which.durations_known:
        how = f"about {which.seconds:.0f} s of {which.total:.0f} s by recorded durations"
    else:
        how = f"no durations recorded on {which.target} yet, so each counts as 1 s"
    print(
        f"shard {which.index}/{which.count} on {which.target} takes {len(which.taken)} of {which.applicable} "
        f"snippets ({how})" + (":" if which.taken else "."),
        file=sys.stderr,
    )
    for i in which.taken:
        secs = f"{i.last_duration:.1f} s" if i.last_duration is not None else "no duration yet"
        print(f"  {i.snippet.name} ({secs})", file=sys.stderr)


def show_list(items: list[Standing], declared: dict[str, Lesson]) -> None:
    """Every snippet and target with its state, under a line per lesson."""
    width = max((len(i.snippet.name) for i in items), default=10)
    tw = max((len(i.target.name) for i in items), default=6)
    print(f"{'snippet':<{width}}  {'target':<{tw}}  {'state':<14}  {'last run':>8}  recorded at")
    groups: dict[str, list[Standing]] = {}
    for i in items:
        groups.setdefault(lesson_of(i.snippet.name), []).append(i)
    for lesson in [n for n in declared if n in groups] + sorted(set(groups) - set(declared)):
        print(f"== {title(declared, lesson)} (snippets/{lesson + '/' if lesson else ''})")
        for i in groups[lesson]:
            secs, when = (f"{rec.duration_s:.1f} s", rec.recorded_at) if (rec := i.recording) else ("-", "-")
            print(f"{i.snippet.name:<{width}}  {i.target.name:<{tw}}  {i.state.value:<14}  {secs:>8}  {when}")


def must_record(items: list[Standing], strict: bool, store: Store, command: str) -> int:
    """Say what must be recorded and the command that does it; 1 if any must be fresh (model/renewal)."""
    problems = [i for i in items if i.state in TO_RECORD]
    rule = renewal.of(store, strict)
    required = 0
    for i in problems:
        invalid = i.state is State.INVALID
        why = "the build and the tests fail on it" if invalid else rule.why(i.target, i.snippet.name)
        required += bool(why)
        print(
            f"{'error' if why else 'note '} {i.snippet.name} on {i.target}: {i.state.value} "
            f"({i.reason.splitlines()[0]}){f'; it must be fresh: {why}' if why else ''}\n"
            f"      fix: {store.settings.commands.record(i.snippet.name, i.target.name)}"
        )
    # One tab, one machine: a recording that does not prove its target fails as an error.
    wrong = admit.audit(store)
    for problem in wrong:
        print(
            f"error {problem}\n      fix: re-record that tab with {command} --target NAME "
            f"--replace-machine, or move recordings with {command} --adopt FROM TO"
        )
    # A recording of a snippet renamed or deleted would be left behind, and the build fails on it.
    left = store.orphans()
    for path in left:
        print(f"error {store.shown(path)}: a recording of no snippet (renamed or deleted?)")
        print("      fix: delete it")
    n = Counter(i.state for i in items)
    print(
        f"{n[State.FRESH]} fresh, {len(problems)} to record ({required} required"
        + (f"; {n[State.STALE]} shown from an earlier version of the code" if n[State.STALE] else "")
        + f"), {n[State.NOT_APPLICABLE]} not applicable"
        + (f", {len(left)} left over" if left else "")
    )
    print(machines.here_line(store.targets), file=sys.stderr)
    if rule.here != frozenset(machines.targets_here(store.targets)):
        taken = ", ".join(sorted(rule.here)) or "none of the targets"
        print(f"taken for: {taken} ({renewal.KINDS_HERE})", file=sys.stderr)
    return 1 if required or wrong or left else 0


def do_report(opts: Options, store: Store, published: Store, snippets: list[Snippet]) -> int:
    """--list and --check: the chosen targets (every one by default), probing nothing."""
    chosen = choose(store.targets, opts.target, ALL, needed=lambda t: False).chosen
    items = plan(store, snippets, chosen)
    if opts.shard:
        shards = {t: shard.take(published, snippets, t, opts.shard) for t in chosen}
        for taken in shards.values():
            say_shard(taken)
        items = [i for i in items if i.snippet.name in shards[i.target].names]
    if opts.mode == "list":
        show_list(items, lessons.load(store.root))
        print(machines.here_line(store.targets), file=sys.stderr)  # the table stays a table
        return 0
    return must_record(items, opts.strict, store, opts.command)
