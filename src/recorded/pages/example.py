"""One example on a page: the snippet's code, regions folded, then what it printed, a tab per
kind of machine that recorded it (in the configured order), or once if printed alike; under each
output, a provenance line linking to its machine. A stale output stays under a muted line that
opens on what changed. A problem (model/findings.py, the tests' rule) is a warning and a box on
the page. Every text that came from a recording is escaped (model/escape.py).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from ..model import busy, claims, describe, escape, findings, lines
from ..model.recording import Recording
from ..model.renewal import Renewal
from ..model.snippets import Snippet, strip_metadata
from ..model.store import Standing, State, Store
from . import blocks, markup

#: The states whose recording a page shows: a good run, an earlier version's (labelled), a failure.
SHOWN = (State.FRESH, State.STALE, State.FAILED)


@dataclass
class Context:
    store: Store
    renewal: Renewal  #: which recordings must be fresh here
    highlight: Callable[[str, str | None, str], str]  #: the page's highlighter: (code, title, classes)
    link: Callable[[str], str | None]  #: a machine's anchor -> its URL on the recordings page
    problems: list[str] = field(default_factory=list)


def render(spec: blocks.Block, snippet: Snippet, ctx: Context, count: int) -> str:
    """The example's HTML, its problems (each also in ``ctx.problems``) first."""
    code = _code(snippet, spec, ctx)
    standings = [ctx.store.standing(snippet, t) for t in ctx.store.targets]
    for standing in standings:  # what is wrong on each target: model/findings.py, the tests' rule
        for found in findings.of(standing, spec.claims_for(standing.target.name), ctx.store, ctx.renewal):
            ctx.problems.append(_words(found, standing.snippet.name, ctx))
    shown = [s for s in standings if s.state in SHOWN and s.recording is not None]
    output = _outputs(spec, snippet, shown, ctx, count) + _not_recorded(standings, ctx, _alike(shown))
    problems = "".join(f"<li>{escape.html(p)}</li>" for p in ctx.problems)
    box = markup.admonition("failure recorded-problems", "This example needs attention", problems, "ul")
    return (box if problems else "") + code + output


def _code(snippet: Snippet, spec: blocks.Block, ctx: Context) -> str:
    segments = snippet.segments()
    names = {s.region for s in segments if s.region}
    for name in spec.unfold:
        if name not in names:
            ctx.problems.append(
                f"{snippet.name} has no region {name!r} to unfold; its regions are "
                f"{sorted(names) or 'none'} (`# region NAME` … `# endregion`)."
            )
    carrier = next((i for i, s in enumerate(segments) if s.region is None), 0)
    parts = []
    for i, seg in enumerate(segments):
        # One copy button, on the first lines shown; it copies the whole file (data-copy).
        first = i == carrier
        block = ctx.highlight(seg.code, snippet.name if first else None, "" if first else "no-copy")
        if seg.region is None:
            parts.append(block)
            continue
        opened = " open" if seg.region in spec.unfold else ""
        count = f"{seg.lines} line" + ("" if seg.lines == 1 else "s")
        parts.append(
            f'<details class="recorded-region"{opened}><summary>{escape.html(seg.region)} '
            f'<span class="recorded-region-lines">{count}</span></summary>{block}</details>'
        )
    whole = escape.html(snippet.display_source())
    return f'<div class="recorded-code" data-copy="{whole}">{"".join(parts)}</div>'


def _outputs(spec: blocks.Block, snippet: Snippet, shown: list[Standing], ctx: Context, count: int) -> str:
    if not shown:
        return ""
    if _alike(shown):
        first = shown[0].recording
        assert first is not None
        lines_ = sorted({n for s in shown for n in _claimed(spec, s)})
        # Printed alike says nothing about any one machine: only their count, linked.
        href = ctx.link("machines")
        machines = f'<a href="{escape.html(href)}">machines</a>' if href else "machines"
        return (
            f'<div class="recorded-once">{_output(first, lines_)}'
            f'<p class="recorded-provenance">Printed alike on {len(shown)} {machines}.</p></div>'
        )
    tabs = []
    for s in shown:
        target, rec = s.target, s.recording
        assert rec is not None
        if s.state is State.FAILED:
            tail = "\n".join(rec.stderr[-15:]) or "(no error output)"
            body = markup.admonition(
                "failure",
                f"The last {target.label} run failed",
                f"It ended with status <code>{escape.html(rec.status)}</code> "
                f"(exit code {escape.html(rec.exit_code)}); the end of its error output:",
            ) + markup.output_html(tail.split("\n"), [])
        else:
            body = _output(rec, _claimed(spec, s))
            if s.state is State.STALE:
                body += _earlier(rec, snippet)
        tabs.append((target.tab, body + _provenance(s, ctx)))
    return markup.tabbed(f"__recorded_{count}", tabs)


def _output(rec: Recording, claimed: list[int]) -> str:
    """What a run printed, the claimed lines marked, and beside each timing verdict how many
    fresh runs gave it: "in 3 of 3 runs", or "in 2 of 3 runs; slower in 1"."""
    notes = {
        number: lines.runs_note(rec.outputs, line.value, line.label, n)
        for number, line, n in lines.scan(rec.stdout)
        if line.kind == "verdict" and line.value in lines.TIMING_VERDICTS
    }
    out = markup.output_html(rec.stdout or ["(printed nothing)"], claimed, notes)
    if rec.stderr:  # a successful run's warnings: folded to one word, out of the reader's way
        out += f'<details class="recorded-stderr"><summary>stderr</summary>{markup.output_html(rec.stderr, [])}</details>'
    return out


def _earlier(rec: Recording, snippet: Snippet) -> str:
    """A muted line saying the output came from an earlier version of the code, opening on a
    diff with the shown code (escaped: a bundle's code is untrusted text)."""
    line = "recorded with an earlier version of this code"
    if not rec.code:
        return f'<p class="recorded-provenance recorded-earlier">{line} (which it does not hold)</p>'
    before, after = strip_metadata(rec.code).splitlines(), snippet.display_source().splitlines()
    diff = list(difflib.unified_diff(before, after, "as recorded", "as shown", n=1, lineterm=""))[2:]
    shown = markup.output_html(diff or ["(only comments, docstrings or layout differ)"], [])
    return f'<details class="recorded-provenance recorded-earlier"><summary>{line}</summary>{shown}</details>'


def _provenance(standing: Standing, ctx: Context) -> str:
    rec, target = standing.recording, standing.target
    assert rec is not None
    device_code = ctx.store.targets.device_for(standing.snippet.requires) is not None
    emulated = f"{target.label}: " if target.emulated else ""
    said = busy.words(rec.busy)
    loaded = f" · busy machine, {said}" if said and busy.too_busy(rec.busy) else ""
    words = escape.html(emulated + describe.provenance(rec, device_code) + loaded)
    href = ctx.link(describe.anchor(rec.machine))
    link = f' · <a href="{escape.html(href)}">the machine</a>' if href else ""
    return f'<p class="recorded-provenance">{words}{link}</p>'


def _alike(shown: list[Standing]) -> bool:
    """Two or more fresh recordings, all of which printed the same."""
    printed = {(tuple(s.recording.stdout), tuple(s.recording.stderr)) for s in shown if s.recording}
    return len(shown) >= 2 and len(printed) == 1 and all(s.state is State.FRESH for s in shown)


def _not_recorded(standings: list[Standing], ctx: Context, alike: bool) -> str:
    """A muted line naming the kinds that recorded other examples but not this one, and this
    machine's kind; under an output printed alike, only this machine's (the others tell a reader
    nothing)."""
    missing = [
        s.target.tab
        for s in standings
        if s.state is State.MISSING
        and (s.target.name in ctx.renewal.here or (not alike and s.target.name in ctx.renewal.recorded))
    ]
    said = f"Not recorded yet on {escape.html(', '.join(missing))}."
    return f'<p class="recorded-provenance recorded-missing">{said}</p>' if missing else ""


def _claimed(spec: blocks.Block, standing: Standing) -> list[int]:
    """The 1-based lines marked for the ``highlight`` claims, where their whole group matches."""
    rec = standing.recording
    if rec is None or not spec.highlight:
        return []
    found: set[int] = set()
    for group in spec.claims_for(standing.target.name):
        at = claims.match(list(group), rec.stdout)
        found |= {
            i + 1 for claim, i in zip(group, at, strict=True) if i is not None and claim in spec.highlight
        }
    return sorted(found)


def _words(found: findings.Finding, name: str, ctx: Context) -> str:
    """A finding as the page's box and the build's warning say it."""
    label, fix = found.target.label, f"run `{ctx.store.settings.commands.record(name, found.target.name)}`."
    of = f"the {label} recording of {name}"
    match found:
        case findings.Invalid():
            return found.reason
        case findings.MustRenew(state=State.MISSING):
            return f"{name} has no {label} recording ({found.why}); {fix}"
        case findings.MustRenew(state=State.STALE):
            return f"{of} is of an earlier version of its code ({found.why}); {fix}"
        case findings.MustRenew():
            status = found.recording.status if found.recording else found.reason
            return f"{of} failed ({status}); see its stderr."
        case findings.OtherMachine():
            return (
                f"{of} was made on another machine than the {found.host.label} one "
                f"({'; '.join(found.differences)}); re-record both targets on one machine."
            )
        case findings.NotPrinted():
            near = [f"{n!r} (for {c!r})" for c, n in found.nearest()]
            said = f" Nearest printed line{'s' * (len(near) > 1)}: {', '.join(near)}." if near else ""
            which = f" in run {found.nth_run} of {found.run_count}" if found.run_count > 1 else ""
            return f"{of} does not print {found.missing!r}{which} ({claims.RULE}).{said}"
