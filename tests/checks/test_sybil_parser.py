"""The Sybil parser, over tiny projects built in tmp_path, with a fake live runner.

Each test writes one docs page, parses it with Sybil as the root conftest.py does, and
evaluates the examples the way pytest would: a returned problem raises SybilFailure, a
snippet needing absent hardware raises unittest.SkipTest.
"""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.example import SybilFailure

import projects
from recorded.checks.sybil import LiveRuns, RecordedParser
from recorded.model.recording import Ending
from recorded.model.snippets import Snippet
from recorded.recorder import runner
from recorded.recorder.runner import RunResult

OUTPUT = ["hello", "answer: 42", "done"]


class FakeRun:
    """Stands in for runner.run: returns what the test says, and notes each call."""

    def __init__(self):
        self.results: dict[str, RunResult] = {}  # by snippet name; else prints OUTPUT
        self.calls: list[tuple[str, str]] = []

    def __call__(self, snippet: Snippet, target, timeout: float, **options) -> RunResult:
        self.calls.append((snippet.name, target.name))
        return self.results.get(snippet.name, RunResult(Ending.OK, 0, OUTPUT, [], 0.01))


class Project(projects.Project):
    """A throwaway project whose pages Sybil reads, with a fake live runner."""

    def __init__(self, root: Path, monkeypatch):
        super().__init__(root)
        self.monkeypatch = monkeypatch
        self.run = FakeRun()
        self.live = LiveRuns(run=self.run)
        (root / "docs").mkdir()
        self.live_target("cpu")

    def live_target(self, target: str) -> None:
        """Decide what hardware LiveRuns finds on 'this machine', without probing it."""

        def check(t, python=None):
            if t.needs_device and target != "cuda":
                raise runner.TargetCheckFailed("no GPU here")

        self.monkeypatch.setattr(runner, "check", check)

    def evaluate(self, text: str) -> list[object]:
        """Each recorded example's outcome: None (passed), a SybilFailure or a SkipTest."""
        path = self.root / "docs" / "page.md"
        path.write_text(text, encoding="utf-8")
        parser = RecordedParser(root=self.root, live=self.live)
        document = Sybil(parsers=[parser], path=str(self.root / "docs"), patterns=["*.md"]).parse(path)
        outcomes: list[object] = []
        for example in document:
            try:
                example.evaluate()
            except (SybilFailure, unittest.SkipTest) as exc:
                outcomes.append(exc)
            else:
                outcomes.append(None)
        return outcomes

    def failure(self, text: str) -> str:
        (outcome,) = self.evaluate(text)
        assert isinstance(outcome, SybilFailure), f"expected a failure, got {outcome!r}"
        return outcome.result


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    monkeypatch.delenv("RECORDINGS_STRICT", raising=False)
    return Project(tmp_path, monkeypatch)


def gpu_snippet(project: Project) -> Snippet:
    return project.snippet("lesson/gpu.py", 'print("on the gpu")\n', requires=["cuda"])


def page(*blocks: str) -> str:
    """A page whose first block header sits on line 3."""
    return "# Page\n\n" + "\n\nSome prose.\n\n".join(blocks) + "\n"


def block(snippet: str = "lesson/x.py", body: str = "") -> str:
    return f"/// recorded | {snippet}\n{body}///"


def test_claims_that_hold_live_and_in_every_recording_pass(project):
    snippet = project.snippet()
    project.recording(snippet, "cpu", OUTPUT)
    project.recording(snippet, "cuda", OUTPUT)

    outcomes = project.evaluate(page(block(body='expect:\n  - "hello"\n  - "answer: ..."\n')))

    assert outcomes == [None]
    assert project.run.calls == [("lesson/x.py", "cpu")]


def test_wrong_claim_names_page_line_snippet_target_and_diff(project):
    project.recording(project.snippet(), "cpu", OUTPUT)
    # line 3: header, 4: expect:, 5: the wrong claim
    text = page(block(body='expect:\n  - "answer: 43"\n'))

    message = project.failure(text)

    assert "/docs/page.md:5 not found in order: 'answer: 43'" in message
    assert "lesson/x.py, cpu recording" in message
    assert "lesson/x.py, live run on this machine (cpu)" in message
    assert "- answer: 43" in message and "+ answer: 42" in message  # the diff
    assert "  | answer: 42" in message  # what was printed


def test_claims_must_appear_in_order(project):
    project.recording(project.snippet(), "cpu", OUTPUT)

    message = project.failure(page(block(body='expect:\n  - "done"\n  - "hello"\n')))

    assert "page.md:6 not found in order: 'hello'" in message


def test_stale_cpu_recording_fails_naming_the_command_to_rerecord(project):
    project.recording(project.snippet(), "cpu", OUTPUT, stale=True)

    message = project.failure(page(block(body='expect:\n  - "hello"\n')))

    assert "cpu recording" in message and "stale" in message
    assert "python -m recorded --target cpu lesson/x.py" in message


def test_missing_cpu_recording_fails(project):
    project.snippet()

    message = project.failure(page(block()))

    assert "missing" in message
    assert "python -m recorded --target cpu lesson/x.py" in message


def test_unreadable_recording_fails_naming_the_file(project):
    snippet = project.snippet()
    path = project.store.path(snippet.name, "cpu")
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")

    message = project.failure(page(block()))

    assert "recordings/cpu/lesson/x.json" in message and "not a readable JSON recording" in message


def test_missing_cuda_recording_passes_unless_strict(project, monkeypatch):
    project.recording(project.snippet(), "cpu", OUTPUT)
    text = page(block(body='expect:\n  - "hello"\n'))

    assert project.evaluate(text) == [None]

    monkeypatch.setenv("RECORDINGS_STRICT", "1")
    message = project.failure(text)
    assert "cuda recording" in message and "missing" in message
    assert "python -m recorded --target cuda lesson/x.py" in message


def test_expect_on_cuda_is_checked_against_the_cuda_recording_only(project):
    snippet = project.snippet()
    project.recording(snippet, "cpu", OUTPUT)
    project.recording(snippet, "cuda", OUTPUT + ["fast here: True"])
    text = page(block(body='expect_on:\n  cuda:\n    - "fast here: True"\n'))

    # Neither the CPU recording nor the live CPU run prints it, and neither is asked to.
    assert project.evaluate(text) == [None]

    project.recording(snippet, "cuda", OUTPUT + ["fast here: False"])
    message = project.failure(text)
    assert "lesson/x.py, cuda recording" in message and "page.md:6 not found" in message
    assert "cpu recording" not in message and "live run" not in message


def test_expect_on_cpu_is_checked_against_the_cpu_recording(project):
    snippet = project.snippet()
    project.recording(snippet, "cpu", OUTPUT + ["fast here: False"])
    project.recording(snippet, "cuda", OUTPUT + ["fast here: True"])

    message = project.failure(page(block(body='expect_on:\n  cpu:\n    - "fast here: True"\n')))

    assert "lesson/x.py, cpu recording" in message and "cuda recording" not in message


def test_snippet_cited_by_two_blocks_runs_live_once(project):
    project.recording(project.snippet(), "cpu", OUTPUT)
    text = page(block(body='expect:\n  - "hello"\n'), block(body='expect:\n  - "done"\n'))

    outcomes = project.evaluate(text)

    assert outcomes == [None, None]
    assert project.run.calls == [("lesson/x.py", "cpu")]


def test_snippet_needing_cuda_is_skipped_on_a_cpu_machine_with_a_reason(project):
    project.recording(gpu_snippet(project), "cuda", ["on the gpu"])

    (outcome,) = project.evaluate(page(block("lesson/gpu.py", 'expect:\n  - "on the gpu"\n')))

    assert isinstance(outcome, unittest.SkipTest)
    assert "lesson/gpu.py needs cuda" in str(outcome)
    assert project.run.calls == []


def test_snippet_needing_cuda_fails_rather_than_skips_when_its_recording_contradicts_a_claim(project):
    project.recording(gpu_snippet(project), "cuda", ["on the cpu?"])

    message = project.failure(page(block("lesson/gpu.py", 'expect:\n  - "on the gpu"\n')))

    assert "lesson/gpu.py, cuda recording" in message and "page.md:5 not found" in message
    assert project.run.calls == []


def test_snippet_needing_cuda_runs_live_on_a_cuda_machine(project):
    project.live_target("cuda")
    project.run.results["lesson/gpu.py"] = RunResult(Ending.OK, 0, ["on the gpu"], [], 0.01)
    project.recording(gpu_snippet(project), "cuda", ["on the gpu"])

    assert project.evaluate(page(block("lesson/gpu.py", 'expect:\n  - "on the gpu"\n'))) == [None]
    assert project.run.calls == [("lesson/gpu.py", "cuda")]


def test_failing_live_run_fails_with_its_stderr(project):
    project.recording(project.snippet(), "cpu", OUTPUT)
    project.run.results["lesson/x.py"] = RunResult(
        Ending.ERROR, 1, [], ["Traceback (most recent call last):", "ValueError: boom"], 0.01
    )

    message = project.failure(page(block()))

    assert "live run on this machine (cpu): error (exit code 1)" in message
    assert "ValueError: boom" in message


# The same malformed blocks as in pages/test_markdown_ext.py, on purpose: the tests and the site must refuse alike.
@pytest.mark.parametrize(
    "header, body, message",
    [
        ("/// recorded | lesson/x.py", "expect: [unclosed\n", "not valid YAML"),
        ("/// recorded | lesson/x.py", 'expects:\n  - "hello"\n', "unknown key(s) ['expects']"),
        ("/// recorded | lesson/x.py", 'expect_on:\n  tpu:\n    - "hello"\n', "unknown target(s) ['tpu']"),
        ("/// recorded", "", "names no snippet"),
    ],
    ids=["bad-yaml", "unknown-key", "unknown-target", "no-path"],
)
def test_malformed_block_fails_with_a_clear_message(project, header, body, message):
    project.recording(project.snippet(), "cpu", OUTPUT)

    failure = project.failure(page(f"{header}\n{body}///"))

    assert failure.startswith("malformed recorded block:") and message in failure
    assert project.run.calls == []


@pytest.mark.parametrize(
    "name, message", [("lesson/nope.py", "no such snippet"), ("../x.py", "relative path")]
)
def test_block_naming_no_usable_snippet_fails(project, name, message):
    project.snippet()

    failure = project.failure(page(block(name)))

    assert failure.startswith("recorded block:") and message in failure


def test_header_inside_a_fenced_example_is_not_a_test(project):
    text = page('```text\n/// recorded | lesson/nope.py\nexpect:\n  - "x"\n///\n```')

    assert project.evaluate(text) == []


def test_header_in_a_fenced_example_without_a_closing_line_does_not_break_the_page(project):
    project.recording(project.snippet(), "cpu", OUTPUT)
    text = page(block(body='expect:\n  - "hello"\n'), "```text\n/// recorded | lesson/x.py\n```")

    assert project.evaluate(text) == [None]


def test_block_without_a_closing_line_fails_with_a_clear_message(project):
    project.recording(project.snippet(), "cpu", OUTPUT)

    failure = project.failure(page('/// recorded | lesson/x.py\nexpect:\n  - "hello"\n\nMore prose.'))

    assert failure == "malformed recorded block: it has no closing `///` line; end the block with one."


def test_a_claim_must_hold_in_every_fresh_run_of_a_recording(project):
    from recorded.model.recording import Run

    rec = project.recording(project.snippet(), "cpu", OUTPUT)
    rec.later_runs = [Run(OUTPUT, 0.01), Run(["hello", "answer: 41", "done"], 0.01)]
    project.store.write(rec)

    message = project.failure(page(block(body='expect:\n  - "answer: 42"\n')))

    assert "lesson/x.py, cpu recording" in message and ", run 3 of 3:" in message
    assert "run 1 of 3" not in message and "run 2 of 3" not in message


# -- one live run per session, shared (recorded/checks/live.py) -----------------------------


def test_test_processes_sharing_a_folder_run_a_snippet_once(project, tmp_path):
    snippet = project.snippet()
    first, second = FakeRun(), FakeRun()
    worker_a = LiveRuns(run=first).share(tmp_path / "live", project.root)
    worker_b = LiveRuns(run=second).share(tmp_path / "live", project.root)

    assert worker_a(snippet).stdout == OUTPUT
    assert worker_b(snippet).stdout == OUTPUT
    assert first.calls + second.calls == [("lesson/x.py", "cpu")]


NOTEBOOK_PAGE = """\
# Counting

/// recorded | lesson/a.py
///

/// recorded | lesson/b.py
///

/// recorded | lesson/c.py
///
"""


def test_a_notebook_lessons_snippets_run_once_as_its_cells_in_one_kernel(project, tmp_path):
    # a.py prints whether it runs in Jupyter's kernel; b.py raises, and c.py still runs after it.
    snippets = [
        project.snippet("lesson/a.py", 'import sys\nprint("in a kernel:", "ipykernel" in sys.modules)\n'),
        project.snippet("lesson/b.py", 'raise ValueError("b broke")\n'),
        project.snippet("lesson/c.py", 'print("c ran")\n'),
    ]
    project.page("lesson/page.md", NOTEBOOK_PAGE)
    project.file("mkdocs.yml", "site_name: Counting\nnav:\n  - Counting: lesson/page.md\n")
    project.lesson("lesson", "Counting", ["lesson/page.md"], notebook="lesson.ipynb")
    live = LiveRuns(run=project.run).share(tmp_path / "live", project.root)

    a, b, c = (live(snippet) for snippet in snippets)

    assert project.run.calls == []  # none ran on its own
    assert a.status == "ok" and a.stdout == ["in a kernel: True"]
    assert b.status == "error" and any("ValueError: b broke" in line for line in b.stderr)
    assert c.status == "ok" and c.stdout == ["c ran"]
    done = live.notebook("lesson")
    assert done["error"] is None and sorted(done["cells"]) == ["lesson/a.py", "lesson/b.py", "lesson/c.py"]
