"""``record_runs.py --compare``: run the snippets here (never into recordings/) and print this
machine's verdict and timing lines beside every target's published ones (paired as model/lines.py says)."""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import textwrap
from collections.abc import Iterable
from pathlib import Path

from ..config.targets import Target
from ..model import busy, describe, machines
from ..model.lines import TIMING_VERDICTS, Line, answers, parse, shown_label
from ..model.machines import Machine
from ..model.recording import Recording
from ..model.snippets import Snippet
from ..model.store import State, Store
from ..recorder import shard
from ..recorder.choose import ALL, AUTO, choose, named
from ..recorder.record import plan, to_run
from .options import Options, UsageError
from .record import cannot, record_with, save_bundle
from .report import say_shard

WIDTH = 100  #: the terminal a report must fit by default
LABEL = 31  #: the row labels' column
CELL = 17  #: each machine's column: "within noise 3/3" fits

#: A column of a snippet's rows: its heading, the recording, the lines it printed.
Column = tuple[str, Recording | None, dict]


def _cells(texts: Iterable[str], width: int = CELL) -> str:
    """Each text in a column ``width`` wide, cut with "…" where it would touch the next."""
    return "".join(f"{t if len(t) < width else t[: width - 2] + '…':<{width}}" for t in texts)


def machine_words(m: Machine) -> str:
    torch = m.release("torch")
    return describe.short_machine(m, False) + (f" · torch {torch}" if torch else "")


def busy_line(rec: Recording) -> str:
    """ "busy: other work used up to 40% of the CPUs" when any of its runs was too busy, else ""."""
    figures = [run.busy for run in rec.runs]
    said = f"busy: other work used up to {busy.worst(figures) * 100:.0f}% of the CPUs"
    return said if busy.too_busy(figures) else ""


def table(
    published: Store, snippets: list[Snippet], here: dict[str, Recording], skipped: dict[str, str], first: str
) -> str:
    """The comparison for a 100-column terminal: ``first``, the machines, per snippet a row per verdict
    or timing line, this machine's value beside each published tab's, and where they agree and differ."""
    shown = [t for t in published.targets if any(published.standing(s, t).recording for s in snippets)]
    out = [first]
    for i, t in enumerate(shown):
        recs = [published.standing(s, t).recording for s in snippets]
        names = sorted({machine_words(rec.machine) for rec in recs if rec is not None})
        out.append(f"{'Published:' if i == 0 else '':<14}{t.tab:<14}{'; '.join(names)}")
    out += textwrap.wrap(
        "Times are as each run printed them, unit included; a verdict says how many fresh runs gave it "
        "(faster 3/3). Published tabs may have run other PyTorch versions (above).",
        WIDTH,
    )
    verdicts: list[str] = []  # per verdict compared: "" where every tab agrees, else where it differs
    for s in snippets:
        mine = here.get(s.name)
        out += _head(s, mine, skipped.get(s.name))
        theirs = [(t.tab, published.standing(s, t).recording) for t in shown]
        columns: list[Column] = [("here", mine, parse(mine.stdout) if mine and mine.ok else {})]
        columns += [(tab, rec, parse(rec.stdout) if rec else {}) for tab, rec in theirs]
        out += _rows(columns)
        for key, line in columns[0][2].items():
            others = {tab: o.value for tab, _, lines in columns[1:] if (o := lines.get(key)) is not None}
            if line.kind == "verdict" and others:
                elsewhere = ", ".join(f"{v} on {tab}" for tab, v in others.items() if v != line.value)
                verdicts.append(elsewhere and f"  {s.name}: {line.label}: {line.value} here; {elsewhere}")
    differs = [v for v in verdicts if v]
    summary = (
        f"Summary: {len(verdicts) - len(differs)} of the {len(verdicts)} verdicts this machine printed agree "
        "with every published tab that printed them" + ("; these differ:" if differs else ".")
        if verdicts
        else "Summary: no verdict here to compare with the published tabs."
    )
    out += ["", *textwrap.wrap(summary, WIDTH)]
    out += [textwrap.fill(d, WIDTH, subsequent_indent="    ") for d in differs]
    return "\n".join(out) + "\n"


def _head(s: Snippet, mine: Recording | None, why: str | None) -> list[str]:
    """A snippet's first lines: how its run here went."""
    if why:
        head = f"skipped here ({why})"
    elif mine:
        runs = f"{len(mine.runs)} run{'s' * bool(mine.later_runs)}"
        head = f"{mine.status} here, {runs}, {mine.duration_s:.1f} s" + (" each" if mine.later_runs else "")
    else:
        head = "not run here"
    out = ["", textwrap.fill(f"{s.name}: {head}", WIDTH, subsequent_indent="  ")]
    out += [f"  {said}"] if mine and (said := busy_line(mine)) else []
    if mine and not mine.ok:
        said = f"  exit code {mine.exit_code}: {(mine.stderr or ['(no error output)'])[-1]}"
        out.append(textwrap.fill(said, WIDTH, subsequent_indent="    "))
    return out


def _rows(columns: list[Column]) -> list[str]:
    """One row per line any column printed; "here" beside as many published columns as fit."""
    keys = list(dict.fromkeys(key for _, _, lines in columns for key in lines))
    per = (WIDTH - LABEL - CELL) // CELL
    groups = [columns[i : i + per] for i in range(1, len(columns), per)] or [[]]
    out = []
    for group in groups if keys else []:
        cols = [columns[0], *group]
        out.append((" " * LABEL + _cells(c[0] for c in cols)).rstrip())
        for key in keys:
            cells = [
                _count(rec, line, key[2]) if rec and (line := lines.get(key)) else "-"
                for _, rec, lines in cols
            ]
            out.append(("  " + _cells([shown_label(key[1], key[2])], LABEL - 2) + _cells(cells)).rstrip())
    return out


def _count(rec: Recording, line: Line, n: int) -> str:
    """A verdict with how many fresh runs gave it: "faster 3/3"."""
    if line.value not in TIMING_VERDICTS:
        return line.value
    said = answers(rec.outputs, line.label, n)
    return f"{line.value} {said.count(line.value)}/{len(said)}"


def compare_target(store: Store, opts: Options, snippets: list[Snippet]) -> tuple[Target, str]:
    """The one target --compare runs on, and why (for the notes on snippets it cannot run)."""
    if (opts.target or AUTO) == ALL:
        raise UsageError("--compare runs on one target: name it with --target, or use --target auto.")
    if opts.target not in (AUTO, None) and len(named(store.targets, opts.target)) > 1:
        raise UsageError("--compare runs on one target: name one with --target.")
    choice = choose(store.targets, opts.target, AUTO, needed=lambda t: bool(snippets))
    if choice.named and choice.skipped:
        raise cannot(store, *choice.skipped[0], done="run")
    target = choice.chosen[0]  # one named target, or the auto one (else choose raised)
    if choice.named:
        return target, f"--target {target}"
    return target, choice.why() or "the first auto target this machine can run"


def do_compare(opts: Options, published: Store, snippets: list[Snippet], made: list[Recording]) -> int:
    target, why = compare_target(published, opts, snippets)
    if opts.shard:
        mine = shard.take(published, snippets, target, opts.shard)
        say_shard(mine)
        snippets = [s for s in snippets if s.name in mine.names or not s.runs_on(target)]
    with tempfile.TemporaryDirectory(prefix="record-runs-compare-") as tmp:
        # Without --out the runs go to a scratch store, thrown away: recordings/ is never written.
        store = Store(published.root, Path(opts.out or tmp), published.targets)
        items = plan(store, snippets, (target,))
        needs = f"and this run is on {target} ({why})"
        inapplicable = [i.snippet for i in items if i.state is State.NOT_APPLICABLE]
        skipped = {s.name: f"needs {', '.join(sorted(s.requires))}, {needs}" for s in inapplicable}
        here: dict[str, Recording] = {}

        def keep(rec: Recording, written: bool) -> None:
            here[rec.snippet] = rec
            made.extend([rec] if written else [])

        # A reader compares on the machine they have: busy runs are kept, and marked.
        kept_busy = dataclasses.replace(opts, refuse_busy=False)
        _, failed = record_with(kept_busy, store, to_run(items, force=True), on_run=keep)
        first = next(iter(here.values()), None)
        machine = (
            machine_words(first.machine) if first else describe.cpu(Machine({"cpu": machines.this_cpu()}))
        )
        print(table(published, snippets, here, skipped, f"This machine: {machine}, run as {target}."), end="")
        if opts.out:
            print(f"this machine's runs: {len(made)} written to {opts.out}", file=sys.stderr)
        save_bundle(opts.bundle, made)
    return 1 if failed else 0
