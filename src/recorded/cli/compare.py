"""This machine's verdict and timing lines beside the published recordings of every target.

Standard library only. ``record_runs.py --compare`` runs the snippets here (never into
recordings/) and prints ``table(...)``.

Verdict and timing lines are read by the one rule of model/lines.py, and paired across
machines by kind, label and how many times the label came before.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from ..model import describe, machines
from ..model.lines import parse
from ..model.machines import Machine
from ..model.snippets import Snippet
from ..model.store import Recording, State, Status, Store
from ..recorder import shard
from ..recorder.choose import ALL, AUTO, Choice, choose, named
from ..recorder.record import plan, record, to_run
from .check import say_part
from .options import Options, UsageError
from .record import cannot, save_bundle

MAX_LABEL = 46


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def machine_words(m: Machine) -> str:
    parts = [describe.machine(m)]
    for lib in ("python", "torch"):
        if m.version(lib):
            parts.append(f"{'Python' if lib == 'python' else lib} {m.version(lib)}")
    return " · ".join(parts)


def _published_machines(published: Store, snippets: list[Snippet], target: str) -> list[str]:
    counts: dict[str, int] = {}
    for s in snippets:
        rec = published.status(s, target).recording
        if rec is not None:
            words = machine_words(rec.machine)
            counts[words] = counts.get(words, 0) + 1
    return [w + (f" ({n} recordings)" if len(counts) > 1 else "") for w, n in counts.items()]


def _status(rec: Recording) -> str:
    return f"{rec.duration_s:.1f} s {rec.status}"


def table(
    published: Store,
    snippets: list[Snippet],
    here: dict[str, Recording],
    skipped: dict[str, str],
    target: str,
    here_machine: str,
) -> str:
    """The comparison as text: a header naming the machines, then one row per snippet and
    one per verdict or timing line, then what was skipped and a count of verdicts."""
    # Published columns are named as the site's tabs are.
    targets = published.targets.names
    columns = [f"published {published.targets.label(t)}" for t in targets]
    pad = max(17, *(len(c) + 2 for c in columns))
    out = [f"{'this machine:':<{pad}}{here_machine} · target {target}"]
    for t, col in zip(targets, columns):
        names = _published_machines(published, snippets, t)
        out.append(f"{col + ':':<{pad}}{names[0] if names else 'not recorded yet'}")
        out.extend(f"{'':<{pad}}{n}" for n in names[1:])

    rows: list[tuple[str, ...]] = []
    tally = {t: {"same": 0, "differs": 0} for t in targets}
    notes: list[str] = []
    for s in snippets:
        mine = here.get(s.name)
        pub: dict[str, Recording | None] = {}
        head = [s.name, _status(mine) if mine else ("skipped" if s.name in skipped else "-")]
        for t in targets:
            status = published.status(s, t)
            state, rec = status.state, status.recording
            pub[t] = rec
            if state is State.NOT_APPLICABLE:
                head.append("n/a")
            elif rec is None:
                head.append(state.value)  # missing or invalid
            else:
                head.append(_status(rec) + (" (stale)" if state is State.STALE else ""))
        rows.append(tuple(head))
        lines_here = parse(mine.stdout) if mine else {}
        lines_pub = {t: parse(r.stdout) if r else {} for t, r in pub.items()}
        keys = list(lines_here)
        for t in targets:
            keys += [k for k in lines_pub[t] if k not in keys]
        for key in keys:
            kind, label, n = key
            mine_line = lines_here.get(key)
            row = [
                f"  {_clip(label, MAX_LABEL - 2)}" + (f" [{n + 1}]" if n else ""),
                mine_line.value if mine_line else "-",
            ]
            for t in targets:
                other = lines_pub[t].get(key)
                if other is None:
                    row.append("-")
                elif kind == "verdict" and mine_line is not None:
                    mark = "same" if other.value == mine_line.value else "differs"
                    tally[t][mark] += 1
                    row.append(f"{other.value} ({mark})")
                else:
                    row.append(other.value)
            rows.append(tuple(row))
        if mine and not mine.ok:
            last = (mine.stderr or ["(no error output)"])[-1]
            notes.append(f"{s.name}: {mine.status} here, exit code {mine.exit_code}: {last}")

    header = ("snippet / line", "this machine", *columns)
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    out.append("")
    for r in [header, *rows]:
        out.append("  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip())
    out.append("")
    for name, why in skipped.items():
        out.append(f"skipped here: {name}: {why}")
    out.extend(notes)
    verdicts = "; ".join(
        f"{v['same']} same, {v['differs']} differ{'s' * (v['differs'] == 1)} vs published "
        f"{col.removeprefix('published ')}"
        if v["same"] + v["differs"]
        else f"none to compare with published {col.removeprefix('published ')}"
        for col, v in zip(columns, tally.values())
    )
    out.append(f"verdicts here: {verdicts}")
    return "\n".join(out) + "\n"


def compare_target(store: Store, opts: Options, snippets: list[Snippet]) -> tuple[str, str]:
    """The one target --compare runs on, and why (for the skipped-snippet notes)."""
    if (opts.target or AUTO) == ALL:
        raise UsageError("--compare runs on one target: name it with --target, or use --target auto.")
    if opts.target != AUTO and opts.target is not None and len(named(store.targets, opts.target)) > 1:
        raise UsageError("--compare runs on one target: name one with --target.")
    choice: Choice = choose(store.targets, opts.target, AUTO, needed=lambda t: bool(snippets))
    if choice.named:
        if choice.skipped:
            raise cannot(store, *choice.skipped[0], done="run")
        return choice.chosen[0], f"--target {choice.chosen[0]}"
    if not snippets:
        return choice.chosen[0], "the first auto target this machine has"  # nothing will run
    return choice.chosen[0], choice.why() or "the first auto target this machine can run"


def do_compare(opts: Options, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    target, why = compare_target(published, opts, snippets)
    if opts.shard:
        mine = shard.take(published, snippets, target, opts.shard)
        say_part(mine)
        snippets = [
            s for s in snippets if s.name in mine.names or not s.runs_on(published.targets.get(target))
        ]

    with tempfile.TemporaryDirectory(prefix="record-runs-compare-") as tmp:
        # Without --out the runs go to a scratch store that is thrown away: recordings/ is
        # never written. With --out they go to DIR, by the same rules as recording.
        store = Store(published.root, Path(opts.out) if opts.out else Path(tmp), published.targets)
        items = plan(store, snippets, (target,))
        skipped = {
            i.snippet.name: f"needs {', '.join(sorted(i.snippet.requires))}, and this run is on "
            f"{target} ({why})"
            for i in items
            if i.state is State.NOT_APPLICABLE
        }
        work = to_run(items, force=True)
        here: dict[str, Recording] = {}

        def keep(rec: Recording, written: bool) -> None:
            here[rec.snippet] = rec
            if written:
                made.append(rec)

        failed: list[Status] = []
        if work:
            _, failed = record(
                store,
                work,
                timeout=opts.timeout,
                fail_fast=opts.fail_fast,
                on_run=keep,
                refuse_busy=opts.refuse_busy,
                runs=opts.runs or 1,
            )
        if here:
            machine = machine_words(next(iter(here.values())).machine)
        else:
            machine = describe.cpu(Machine({"cpu": machines.this_cpu()}))
        print(table(published, snippets, here, skipped, target, machine), end="")
        if opts.out:
            print(f"this machine's runs: {len(made)} written to {opts.out}", file=sys.stderr)
        save_bundle(opts.bundle, made)
    return 1 if failed else 0
