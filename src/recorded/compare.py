"""This machine's verdict and timing lines beside the published recordings of every target.

Standard library only. ``record_runs.py --compare`` runs the snippets here (never into
recordings/) and prints ``table(...)``.

A *verdict line* is an output line ending in ": " and one of ``VERDICTS`` (the lesson's
three-state timing verdicts, and True or False); its label is the text before that. A *timing line* is any other line holding a number followed by a unit
of time (ms, s, µs, us, ns), such as "float32:  16.70 ms per batch"; its label is the
text before the first such number, and its value every such number, as printed. Lines
are paired across machines by kind, label and how many times the label came before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import describe
from .snippets import Snippet
from .store import Recording, State, Store

#: The values that make a printed line a verdict line, here and on the machines page.
VERDICTS = ("faster", "slower", "within noise", "True", "False")
_VERDICT = re.compile(rf"^(?P<label>.*): (?P<value>{'|'.join(VERDICTS)})$")
_NUMBER = r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_TIMING = re.compile(rf"{_NUMBER}\s?(?:ms|s|µs|us|ns)(?![\w])")
MAX_LABEL = 46


@dataclass(frozen=True)
class Line:
    kind: str  # "verdict" or "timing"
    label: str
    value: str


def parse(stdout: list[str]) -> dict[tuple[str, str, int], Line]:
    """The verdict and timing lines of one output, keyed by (kind, label, occurrence)."""
    found: dict[tuple[str, str, int], Line] = {}
    seen: dict[tuple[str, str], int] = {}
    for raw in stdout:
        text = raw.rstrip()
        if m := _VERDICT.match(text):
            line = Line("verdict", " ".join(m["label"].split()), m["value"])
        elif timings := list(_TIMING.finditer(text)):
            label = " ".join(text[: timings[0].start()].split()).rstrip(" :|=-,(")
            if not label:
                label = " ".join(text[timings[0].end() :].split()).strip(" :|=-,()") or "(unlabelled)"
            line = Line("timing", label, " / ".join(t.group(0) for t in timings))
        else:
            continue
        n = seen.get((line.kind, line.label), 0)
        seen[(line.kind, line.label)] = n + 1
        found[(line.kind, line.label, n)] = line
    return found


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def machine_words(m: dict) -> str:
    parts = [describe.machine(m)]
    for lib in ("python", "torch"):
        if m.get(lib):
            parts.append(f"{'Python' if lib == 'python' else lib} {m[lib]}")
    return " · ".join(parts)


def _published_machines(published: Store, snippets: list[Snippet], target: str) -> list[str]:
    counts: dict[str, int] = {}
    for s in snippets:
        _, rec, _ = published.state(s, target)
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
            state, rec, _ = published.state(s, t)
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
