"""What is wrong with an example on a target (model/findings.py), as the site and the tests say it.

The site's warnings (pages/example.py) and the tests' failures (checks/sybil.py) word the same
findings; over made-up projects, both must name the same targets and the same kinds of problem.
"""

from __future__ import annotations

import re

import pytest

from projects import MACHINE, OTHER_MACHINE, THREE, Project
from recorded.checks.sybil import RecordedParser
from recorded.model import findings, renewal
from recorded.model.recording import Run
from recorded.model.snippets import Snippet, load
from recorded.pages import blocks

OUTPUT = ["hello", "answer: 42", "done"]
WRONG = ["hello", "answer: 41", "done"]
BODY = 'expect:\n  - "hello"\n  - "answer: 42"\nexpect_on:\n  other:\n    - "done"\n'
PAGE = f"# Page\n\n/// recorded | lesson/x.py\n{BODY}///\n"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    made = Project(tmp_path)
    made.targets(*THREE)
    # This machine is none of these made-up kinds: only a required one must be fresh here.
    monkeypatch.setenv(renewal.KINDS_HERE, "")
    monkeypatch.delenv("RECORDINGS_STRICT", raising=False)
    return made


def make(project: Project, states: dict[str, str]) -> None:
    """The snippet, and a recording on each target in the state named (none: missing)."""
    snippet = project.snippet()
    for target, state in states.items():
        if state == "invalid":
            path = project.store.path(snippet.name, target)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{not json", encoding="utf-8")
            continue
        rec = project.recording(
            snippet,
            target,
            WRONG if state.endswith("wrong") else OUTPUT,
            stale=state.startswith("stale"),
            status="error" if state == "failed" else "ok",
            exit_code=1 if state == "failed" else 0,
            machine=OTHER_MACHINE if state == "elsewhere" else MACHINE,
        )
        if state == "runs":  # the shown run prints the claims, a later one does not
            rec.later_runs = [Run(OUTPUT, 0.01), Run(WRONG, 0.01)]
            project.store.write(rec)


def on_the_page(project: Project, warnings, strict: bool) -> set[tuple[str, str]]:
    """(target, kind) of each problem the site build warns about."""
    project.render(PAGE, strict=strict)
    labels = {t.label: t.name for t in project.store.targets}
    said = set()
    for message in warnings():
        if m := re.search(r"recordings/([\w-]+)/lesson/x\.json", message):
            said.add((m.group(1), "invalid"))
            continue
        m = re.search(r"the (.+?) recording of lesson/x\.py|lesson/x\.py has no (.+?) recording", message)
        assert m, message
        target = labels[m.group(1) or m.group(2)]
        if "another machine" in message:
            said.add((target, "machine"))
        elif "does not print" in message:
            said.add((target, "claim"))
        else:
            assert re.search(r"has no|earlier version|failed \(", message), message
            said.add((target, "renew"))
    return said


def in_the_tests(project: Project) -> set[tuple[str, str]]:
    """(target, kind) of each problem the Sybil parser fails a block on."""
    parser = RecordedParser(project.root)
    spec = blocks.parse("lesson/x.py", BODY, parser.store.targets.names)
    said = set()
    for problem in parser.recording_problems(spec, _load(project), lambda claim: "page.md"):
        m = re.match(r"lesson/x\.py, ([\w-]+) recording \S+?(?:, run \d+ of \d+)?:\s(.*)", problem, re.DOTALL)
        assert m, problem
        target, rest = m.groups()
        if rest.startswith(("missing (", "stale (", "failed (")):
            said.add((target, "renew"))
        elif rest.startswith("made on another machine"):
            said.add((target, "machine"))
        elif rest.startswith("claim"):
            said.add((target, "claim"))
        else:
            said.add((target, "invalid"))
    return said


def _load(project: Project) -> Snippet:
    store = project.store
    return load(store.snippets_dir, "lesson/x.py", store.targets)


def found(project: Project, strict: bool) -> set[tuple[str, str]]:
    """(target, kind) of each finding, as model/findings.py gives them."""
    store = project.store
    spec = blocks.parse("lesson/x.py", BODY, store.targets.names)
    snippet = _load(project)
    kinds = {
        findings.Invalid: "invalid",
        findings.MustRenew: "renew",
        findings.OtherMachine: "machine",
        findings.NotPrinted: "claim",
    }
    rule = renewal.of(store, strict)
    return {
        (f.target.name, kinds[type(f)])
        for t in store.targets
        for f in findings.of(store.standing(snippet, t), spec.claims_for(t.name), store, rule)
    }


SCENARIOS = {
    "all fresh": ({"big": "ok", "big-as-small": "ok", "other": "ok"}, False, set()),
    "host missing": ({"big-as-small": "ok", "other": "ok"}, False, {("big", "renew")}),
    "host stale, emulation elsewhere": (
        {"big": "stale", "big-as-small": "elsewhere", "other": "ok"},
        False,
        {("big", "renew"), ("big-as-small", "machine")},
    ),
    "host failed, so no machine to compare": (
        {"big": "failed", "big-as-small": "elsewhere"},
        False,
        {("big", "renew")},
    ),
    "host elsewhere": ({"big": "elsewhere", "big-as-small": "ok"}, False, {("big-as-small", "machine")}),
    "unreadable, and a target's own claim": (
        {"big": "invalid", "other": "wrong"},
        False,
        {("big", "invalid"), ("other", "claim")},
    ),
    "a later run": ({"big": "ok", "big-as-small": "runs"}, False, {("big-as-small", "claim")}),
    "a later run, strict": (
        {"big": "ok", "big-as-small": "runs"},
        True,
        {("big-as-small", "claim"), ("other", "renew")},
    ),
    "everything, strict": (
        {"big": "wrong", "big-as-small": "stale-wrong", "other": "failed"},
        True,
        {("big", "claim"), ("big-as-small", "renew"), ("big-as-small", "claim"), ("other", "renew")},
    ),
    "not required, not strict": (
        {"big": "ok", "big-as-small": "invalid", "other": "stale"},
        False,
        {("big-as-small", "invalid")},
    ),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_site_and_the_tests_name_the_same_problems(project, warnings, monkeypatch, scenario):
    states, strict, expected = SCENARIOS[scenario]
    make(project, states)
    if strict:
        monkeypatch.setenv("RECORDINGS_STRICT", "1")

    assert found(project, strict) == expected
    assert on_the_page(project, warnings, strict) == expected
    assert in_the_tests(project) == expected


def test_the_tests_fail_an_emulated_recording_from_another_machine_naming_both_commands(project):
    make(project, {"big": "ok", "big-as-small": "elsewhere", "other": "ok"})

    (problem,) = RecordedParser(project.root).recording_problems(
        blocks.parse("lesson/x.py", BODY, project.store.targets.names), _load(project), lambda claim: ""
    )

    assert "lesson/x.py, big-as-small recording" in problem
    assert "made on another machine than the big recording" in problem
    assert "'Test CPU 9000' != 'Other CPU 100'" in problem
    assert "fix: python -m recorded --target big lesson/x.py" in problem
    assert "fix: python -m recorded --target big-as-small lesson/x.py" in problem
