"""A Sybil parser for ``/// recorded`` blocks: one example per block tests every claim it makes. First
the recordings, by model/findings.py (the rule the site's warnings share; every target must be fresh when
RECORDINGS_STRICT=1, the release rule), then ``expect`` in a live run here (checks/live.py), skipped with
the reason where the snippet needs hardware this machine lacks.
"""

from __future__ import annotations

import itertools
import os
import unittest
from pathlib import Path

from sybil import Document, Example, Region

from ..config.settings import switched_on
from ..model import claims, escape, findings, renewal
from ..model.recording import Ending
from ..model.snippets import Snippet, SnippetError, load
from ..model.store import Store
from ..pages import blocks
from ..recorder.sandbox import Limits
from .live import LiveRuns


class RecordedParser:
    """Sybil parser; one example per ``/// recorded`` block."""

    def __init__(self, root: Path | str = ".", live: LiveRuns | None = None):
        self.store = Store(Path(root).resolve())
        self.live = live or LiveRuns()
        self.live.targets = self.store.targets
        self.live.limits = Limits.of(self.store.settings)
        self._renewal: renewal.Renewal | None = None  # what must be fresh here

    def __call__(self, document: Document):
        # The blocks as the site and the notebook read them; one the tests cannot read is an
        # example too, so that it fails rather than goes unchecked.
        starts = [0, *itertools.accumulate(len(line) + 1 for line in document.text.split("\n"))]
        for found in blocks.read(document.text).blocks:
            start, body = starts[found.line - 1] + len(found.prefix), starts[found.line]
            end = starts[found.end - 1] if found.end is not None else body - 1
            parsed: blocks.Block | blocks.BlockError
            try:
                if found.problem:
                    raise blocks.BlockError(found.problem)
                parsed = blocks.parse(found.argument, found.body, self.store.targets.names, found.line + 1)
            except blocks.BlockError as exc:
                parsed = exc
            yield Region(start, end, parsed, self.evaluate)

    def evaluate(self, example: Example) -> str | None:
        spec = example.parsed
        if isinstance(spec, blocks.BlockError):
            return f"malformed recorded block: {spec}"
        try:
            snippet = load(self.store.snippets_dir, spec.snippet, self.store.targets)
        except SnippetError as exc:
            return f"recorded block: {blocks.snippet_problem(exc, self.store.snippets_dir, spec.snippet)}"
        page, body = _shown(Path(example.path)), example.line + 1  # the body starts after the header
        locate = lambda c: f"{page}:{body + spec.claim_lines[c]}" if c in spec.claim_lines else page
        problems = self.recording_problems(spec, snippet, locate)
        if not snippet.runs_on(self.live.target):
            if problems:
                return escape.visible("\n\n".join(problems))
            raise unittest.SkipTest(
                f"{snippet.name} needs {', '.join(sorted(snippet.requires))}, which this machine "
                f"lacks; its recordings were checked, the live run skipped"
            )
        result = self.live(snippet)
        where = f"{snippet.name}, live run on this machine ({self.live.target.name})"
        if result.status is not Ending.OK:
            tail = "\n".join(f"  | {line}" for line in result.stderr[-15:])
            problems.append(f"{where}: {result.status} (exit code {result.exit_code})\n{tail}")
        elif None in (found := claims.match(list(spec.expect), result.stdout)):
            problems.append(f"{where}:\n{claims.explain(list(spec.expect), result.stdout, found, locate)}")
        # The messages quote what snippets printed: no control character reaches the terminal.
        return escape.visible("\n\n".join(problems)) or None

    def recording_problems(self, spec: blocks.Block, snippet: Snippet, locate) -> list[str]:
        """What is wrong with the snippet's recordings for this block (model/findings.py, the
        rule the site shares), each problem naming the recording and the command that renews it."""
        if self._renewal is None:  # read once: the machine and the tree stay as they are for a session
            self._renewal = renewal.of(self.store, switched_on(os.environ.get("RECORDINGS_STRICT", "")))
        problems = []
        for t in self.store.targets:
            standing = self.store.standing(snippet, t)
            for found in findings.of(standing, spec.claims_for(t.name), self.store, self._renewal):
                problems += self._words(found, snippet.name, locate)
        return problems

    def _words(self, found: findings.Finding, name: str, locate) -> list[str]:
        """A finding as a test failure says it."""
        target = found.target.name
        where = f"{name}, {target} recording {_shown(self.store.path(name, target))}"
        fix = f"  fix: {self.store.settings.commands.record(name, target)}"
        match found:
            case findings.Invalid():
                return [f"{where}: {found.reason}"]
            case findings.MustRenew():
                must = f"{found.state.value} ({found.reason}); it must be fresh: {found.why}"
                return [f"{where}: {must}\n{fix}"]
            case findings.OtherMachine():
                host, differ = found.host.name, "; ".join(found.differences)
                again = f"  fix: {self.store.settings.commands.record(name, host)}\n{fix}"
                said = f"made on another machine than the {host} recording ({differ}), whose machine"
                return [f"{where}: {said} an emulated target shares; re-record both on one machine\n{again}"]
            case findings.NotPrinted():
                if found.run_count > 1:
                    where = f"{where}, run {found.nth_run} of {found.run_count}"
                return [
                    f"{where}:\n{claims.explain(list(g.claims), list(found.printed), list(g.found), locate)}"
                    for g in found.groups
                    if g.missing
                ]


def _shown(path: Path) -> str:
    whole = path.resolve()
    return whole.relative_to(Path.cwd()).as_posix() if whole.is_relative_to(Path.cwd()) else str(path)
