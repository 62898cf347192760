"""A Sybil parser for ``/// recorded`` blocks: every claim a page makes is tested, in one example per block.

The recordings, by model/findings.py (the rule the site's warnings share): each readable, fresh where it
must be (model/renewal.py; every target when RECORDINGS_STRICT=1, the release rule), ``expect`` lines in
every shown recording and ``expect_on.<target>`` lines in that target's, in each run, and an emulated
target's made on its host's machine. Then ``expect`` lines in a live run on this machine (checks/live.py),
skipped, with the reason, for a snippet that needs hardware this machine lacks. The blocks are those
blocks.read finds, as for the site and the notebook; one the tests cannot read fails, naming its line.
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
        # The blocks as the site and the notebook read them (blocks.read). One the tests cannot
        # read is an example too, so that it fails rather than goes unchecked.
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
        page = _shown(Path(example.path))
        # The body starts on the line after the header.
        locate = lambda claim: (
            f"{page}:{example.line + 1 + spec.claim_lines[claim]}" if claim in spec.claim_lines else page
        )
        problems = self.recording_problems(spec, snippet, locate)
        live_target = self.live.target
        if not snippet.runs_on(live_target):
            if problems:
                return escape.visible("\n\n".join(problems))
            raise unittest.SkipTest(
                f"{snippet.name} needs {', '.join(sorted(snippet.requires))}, which this machine "
                f"lacks; its recordings were checked, the live run skipped"
            )
        result = self.live(snippet)
        where = f"{snippet.name}, live run on this machine ({live_target.name})"
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
            strict = switched_on(os.environ.get("RECORDINGS_STRICT", ""))
            self._renewal = renewal.of(self.store, strict)
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
                return [
                    f"{where}: {found.state.value} ({found.reason}); it must be fresh: {found.why}\n{fix}"
                ]
            case findings.OtherMachine():
                host = found.host.name
                again = f"  fix: {self.store.settings.commands.record(name, host)}\n{fix}"
                differ = "; ".join(found.differences)
                said = (
                    f"{where}: made on another machine than the {host} recording ({differ}), whose "
                    f"machine an emulated target shares; re-record both on one machine\n{again}"
                )
                return [said]
            case findings.NotPrinted():
                if found.run_count > 1:
                    where = f"{where}, run {found.nth_run} of {found.run_count}"
                printed = list(found.printed)
                return [
                    f"{where}:\n{claims.explain(list(g.claims), printed, list(g.found), locate)}"
                    for g in found.groups
                    if g.missing
                ]


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)
