"""This machine's verdict and timing lines beside the published recordings of every target.

Standard library only. ``record_runs.py --compare`` runs the snippets here (never into
recordings/) and prints ``table(...)``.

Verdict and timing lines are read by the one rule of model/lines.py, and paired across
machines by kind, label and how many times the label came before.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path

from ..model import busy, describe, machines
from ..model.lines import TIMING_VERDICTS, Line, answers, parse
from ..model.machines import Machine
from ..model.recording import Recording
from ..model.snippets import Snippet
from ..model.store import State, Status, Store
from ..recorder import shard
from ..recorder.choose import ALL, AUTO, Choice, choose, named
from ..recorder.record import plan, record, to_run
from .check import say_part
from .options import Options, UsageError
from .record import cannot, save_bundle

#: The terminal a report must fit by default.
WIDTH = 100
LABEL = 31  #: the row labels' column
CELL = 17  #: each machine's column: "within noise 3/3" fits


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def machine_words(m: Machine) -> str:
    torch = m.release("torch")
    return describe.short_machine(m, False) + (f" · torch {torch}" if torch else "")


def _count(rec: Recording, line: Line, n: int) -> str:
    """A verdict with how many fresh runs gave it: "faster 3/3"."""
    said = answers(rec.outputs, line.label, n)
    return (
        f"{line.value} {said.count(line.value)}/{len(said)}" if line.value in TIMING_VERDICTS else line.value
    )


def busy_line(rec: Recording) -> str:
    """ "busy: other work used up to 40% of the CPUs" when any of its runs was too busy, else ""."""
    figures = [rec.busy] + [r.busy for r in rec.runs]
    said = f"busy: other work used up to {busy.worst(figures) * 100:.0f}% of the CPUs"
    return said if busy.too_busy(figures) else ""


def table(
    published: Store,
    snippets: list[Snippet],
    here: dict[str, Recording],
    skipped: dict[str, str],
    target: str,
    here_machine: str,
) -> str:
    """The comparison as text for a 100-column terminal: the machines, then per snippet one row
    per verdict or timing line, this machine's value beside each published tab's (only the
    tabs that recorded something), and a summary of where this machine agrees and differs."""
    shown = [t for t in published.targets if any(published.status(s, t.name).recording for s in snippets)]
    out = [f"This machine: {here_machine}, run as {target}."]
    for i, t in enumerate(shown):
        names = {
            machine_words(rec.machine)
            for s in snippets
            if (rec := published.status(s, t.name).recording) is not None
        }
        out.append(f"{'Published:' if i == 0 else '':<14}{t.tab:<14}{'; '.join(sorted(names))}")
    out += textwrap.wrap(
        "Times are as each run printed them, unit included; a verdict says how many fresh runs gave it "
        "(faster 3/3). Published tabs may have run other PyTorch versions (above).",
        WIDTH,
    )
    per = (WIDTH - LABEL - CELL) // CELL  # published columns beside "here" in one table
    groups = [shown[i : i + per] for i in range(0, len(shown), per)] or [[]]
    differs: list[str] = []
    agree = compared = 0
    for s in snippets:
        mine = here.get(s.name)
        why = skipped.get(s.name)
        head = f"{s.name}: " + (
            f"skipped here ({why})"
            if why
            else f"{mine.status} here, {1 + len(mine.runs)} run{'s' * bool(mine.runs)}, {mine.duration_s:.1f} s"
            + (" each" if mine.runs else "")
            if mine
            else "not run here"
        )
        out += ["", textwrap.fill(head, WIDTH, subsequent_indent="  ")]
        out += [f"  {said}"] if mine and (said := busy_line(mine)) else []
        if mine and not mine.ok:
            said = f"  exit code {mine.exit_code}: {(mine.stderr or ['(no error output)'])[-1]}"
            out.append(textwrap.fill(said, WIDTH, subsequent_indent="    "))
        pub = {t.name: published.status(s, t.name).recording for t in shown}
        lines_here = parse(mine.stdout) if mine and mine.ok else {}
        lines_pub = {name: parse(r.stdout) if r else {} for name, r in pub.items()}
        keys = list(lines_here)
        for found in lines_pub.values():
            keys += [k for k in found if k not in keys]
        for group in groups if keys else []:
            heads = f"  {'':<{LABEL - 2}}{'here':<{CELL}}" + "".join(
                f"{_clip(t.tab, CELL - 1):<{CELL}}" for t in group
            )
            out.append(heads.rstrip())
            for key in keys:
                _, label, n = key
                mine_line = lines_here.get(key)
                row = f"  {_clip(label, LABEL - 3):<{LABEL - 2}}"
                row += f"{_clip(_count(mine, mine_line, n) if mine and mine_line else '-', CELL - 1):<{CELL}}"
                for t in group:
                    other, rec = lines_pub[t.name].get(key), pub[t.name]
                    row += f"{_clip(_count(rec, other, n) if rec and other else '-', CELL - 1):<{CELL}}"
                out.append(row.rstrip())
        for key, line in lines_here.items():
            if line.kind != "verdict":
                continue
            others = {t.tab: o.value for t in shown if (o := lines_pub[t.name].get(key)) is not None}
            if not others:
                continue
            compared += 1
            if all(v == line.value for v in others.values()):
                agree += 1
            else:
                elsewhere = ", ".join(f"{v} on {tab}" for tab, v in others.items() if v != line.value)
                differs.append(f"  {s.name}: {line.label}: {line.value} here; {elsewhere}")
    out.append("")
    if compared:
        summary = f"Summary: {agree} of the {compared} verdicts this machine printed agree with every "
        out += textwrap.wrap(
            summary + "published tab that printed them" + ("; these differ:" if differs else "."), WIDTH
        )
        out += [textwrap.fill(d, WIDTH, subsequent_indent="    ") for d in differs]
    else:
        out.append("Summary: no verdict here to compare with the published tabs.")
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
                refuse_busy=False,  # a reader compares on the machine they have: busy runs are kept and marked
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
