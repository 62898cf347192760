"""One reader of blocks and fences (blocks.read), and every user of it agreeing on one tricky page.

The site (the Markdown extension), the tests (the Sybil parser), the notebook builder and the
benchmark each get the same page: fences of backticks and tildes, one nested in another, a
fence holding a lone `///` and a fake block header, blocks before and after them. They must
find the same blocks, on the same lines, claiming the same lines. A block the tests cannot
read (in an admonition, indented, inside another block, never closed) is reported by each.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from sybil import Document, Sybil
from sybil.example import SybilFailure
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

import projects
from recorded.checks.sybil import LiveRuns, RecordedParser
from recorded.model import claims
from recorded.model.recording import Ending
from recorded.notebook import prose
from recorded.pages import blocks
from recorded.recorder import runner
from recorded.recorder.runner import RunResult

ROOT = Path(__file__).resolve().parents[2]
PRINTED = ["nothing any block claims"]

TRICKY = """\
# A tricky page

/// recorded | lesson/a.py
expect:
  - "hello"
///

````markdown
```text
/// recorded | lesson/fake.py
expect:
  - "a fenced example, not a block"
///
```
````

~~~text
/// recorded | lesson/tilde.py
~~~

```text
///
```

/// recorded | lesson/b.py
expect:
  - "answer: ..."
expect_on:
  {target}:
    - "done"
///

1. A list item holding a fence:

    ```text
    /// recorded | lesson/listed.py
    ///
    ```

/// recorded | lesson/a.py
expect:
  - "bye"
///
"""

#: (line, snippet, claims for the first target) of each block of TRICKY.
EXPECTED = [
    (3, "lesson/a.py", ["hello"]),
    (25, "lesson/b.py", ["answer: ...", "done"]),
    (40, "lesson/a.py", ["bye"]),
]

#: Blocks no reader may take at its word, each with the line of its header.
UNREADABLE = {
    "in-an-admonition": (
        '!!! note\n\n    /// recorded | lesson/a.py\n    expect:\n      - "hello"\n    ///\n',
        5,
    ),
    "indented": (" /// recorded | lesson/a.py\n ///\n", 3),
    "in-a-details-block": ("//// details | More\n/// recorded | lesson/a.py\n///\n////\n", 4),
    "never-closed": ('/// recorded | lesson/a.py\nexpect:\n  - "hello"\n\nMore prose.\n', 3),
}


@pytest.fixture
def project(tmp_path, monkeypatch) -> projects.Project:
    monkeypatch.delenv("RECORDINGS_STRICT", raising=False)

    def check(target, python=None):  # this machine, as the live runs see it: no device
        if target.needs_device:
            raise runner.TargetCheckFailed("no device here")

    monkeypatch.setattr(runner, "check", check)
    project = projects.Project(tmp_path)
    for name in ("lesson/a.py", "lesson/b.py"):
        project.recording(project.snippet(name), project.store.targets.names[0], PRINTED)
    (tmp_path / "docs").mkdir()
    return project


def tricky(project) -> str:
    return TRICKY.replace("{target}", project.store.targets.names[0])


# -- each user of the reader, reduced to (line, snippet, claims) ------------------------------


def by_the_reader(project, text: str) -> list[tuple[int, str, list[str]]]:
    first = project.store.targets.names[0]
    found = []
    for b in blocks.read(text).blocks:
        spec = blocks.parse(b.argument, b.body, project.store.targets.names)
        found.append((b.line, b.argument, [c for group in spec.claims_for(first) for c in group]))
    return found


def by_the_site(project, text: str, caplog) -> list[tuple[int, str, list[str]]]:
    """Every claim of the page fails against PRINTED, so each block's warning says its line,
    its snippet and its claims."""
    caplog.clear()
    html = project.render(text)
    said = re.compile(r"^\(page\):(\d+): the .* recording of (\S+) does not print \[(.*?)\] \(")
    found = [
        (int(m[1]), m[2], re.findall(r"'([^']*)'", m[3]))
        for record in caplog.records
        if (m := said.match(record.getMessage()))
    ]
    assert html.count('<div class="recorded"') == len(found)
    return found


def by_the_tests(project, text: str) -> list[tuple[int, str, list[str]]]:
    path = project.root / "docs" / "page.md"
    path.write_text(text, encoding="utf-8")
    live = LiveRuns(
        run=lambda snippet, target, timeout, **options: RunResult(Ending.OK, 0, PRINTED, [], 0.01)
    )
    parser = RecordedParser(root=project.root, live=live)
    first = project.store.targets.names[0]
    found = []
    for example in Sybil(parsers=[parser], path=str(path.parent), patterns=["*.md"]).parse(path):
        spec = example.parsed
        try:
            example.evaluate()
        except SybilFailure as failure:
            in_recording = failure.result.split(", live run")[0]
            claimed = re.findall(r"not found in order: '([^']*)'", in_recording)
        else:
            claimed = []
        assert claimed == [c for group in spec.claims_for(first) for c in group]
        found.append((example.line, spec.snippet, claimed))
    return found


def load_bench():
    spec = importlib.util.spec_from_file_location("bench", ROOT / "scripts" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    return bench


# -- the reader ---------------------------------------------------------------------------


def test_the_reader_finds_the_blocks_outside_fences_with_their_lines_and_claims(project):
    assert by_the_reader(project, tricky(project)) == EXPECTED
    page = blocks.read(tricky(project))
    assert [(f.start, f.end) for f in page.fences] == [(8, 15), (17, 19), (21, 23), (35, 38)]
    assert all(b.problem is None for b in page.blocks)


def test_the_reader_reads_fences_as_sybils_markdown_lexer_does(project):
    text = tricky(project)
    document = Document(text, "page.md")
    theirs = set()
    for region in RawFencedCodeBlockLexer(info_pattern=re.compile(r".*$\n", re.MULTILINE))(document):
        first = text.count("\n", 0, region.start) + 1
        theirs |= set(range(first, text.count("\n", 0, region.end - 1) + 2))
    assert blocks.read(text).fenced() == theirs


@pytest.mark.parametrize("name", UNREADABLE)
def test_the_reader_marks_a_block_the_tests_cannot_read(name):
    text, line = UNREADABLE[name]
    (found,) = blocks.read("# Page\n\n" + text).blocks
    assert (found.line, found.argument) == (line, "lesson/a.py")
    assert found.problem == (blocks.UNCLOSED if name == "never-closed" else blocks.NESTED)


# -- every user agrees ----------------------------------------------------------------------


def test_the_site_the_tests_the_notebook_and_the_benchmark_agree_on_the_tricky_page(project, caplog):
    text = tricky(project)

    assert by_the_site(project, text, caplog) == EXPECTED
    assert "a fenced example, not a block" in project.render(text)  # shown as code, not read
    assert by_the_tests(project, text) == EXPECTED
    parts = prose.page_parts("page.md", text)
    assert [(p.line, p.text) for p in parts if p.kind == "snippet"] == [
        (line, name) for line, name, _ in EXPECTED
    ]
    peer = load_bench().peer_page(text, project.root / "snippets").split("\n")
    assert [line.split()[-4] for line in peer if "2>&1 || true" in line] == [
        str(project.root / "snippets" / name) for _, name, _ in EXPECTED
    ]
    assert "/// recorded | lesson/fake.py" in peer and "/// recorded | lesson/tilde.py" in peer
    assert "/// recorded | lesson/a.py" not in peer


@pytest.mark.parametrize("name", UNREADABLE)
def test_every_user_reports_a_block_the_tests_cannot_read(project, caplog, name):
    text, line = UNREADABLE[name]
    text = "# Page\n\n" + text
    problem = blocks.UNCLOSED if name == "never-closed" else blocks.NESTED

    project.render(text)
    assert any(
        f"(page):{line}: `/// recorded | lesson/a.py`: {problem}" in r.getMessage() for r in caplog.records
    ), [r.getMessage() for r in caplog.records]
    path = project.root / "docs" / "page.md"
    path.write_text(text, encoding="utf-8")
    parser = RecordedParser(root=project.root, live=LiveRuns(run=lambda *a: pytest.fail("ran a snippet")))
    (example,) = Sybil(parsers=[parser], path=str(path.parent), patterns=["*.md"]).parse(path)
    with pytest.raises(SybilFailure) as failure:
        example.evaluate()
    assert example.line == line and failure.value.result == f"malformed recorded block: {problem}"
    with pytest.raises(prose.NotebookError, match=re.escape(f"page.md:{line}: ")):
        prose.page_parts("page.md", text)
    assert load_bench().peer_page(text, project.root / "snippets") == text


# -- what a wrong block is told ---------------------------------------------------------------


def test_a_claim_not_printed_says_claims_match_whole_lines_and_shows_the_nearest_line(project, caplog):
    first = project.store.targets.names[0]
    snippet = project.snippet("lesson/c.py")
    project.recording(snippet, first, ["hello", "answer: 42", "done"])
    text = '# Page\n\n/// recorded | lesson/c.py\nexpect:\n  - "answer"\n///\n'

    project.render(text)
    (warning,) = [r.getMessage() for r in caplog.records if "does not print" in r.getMessage()]
    assert claims.RULE in warning and "Nearest printed line: 'answer: 42' (for 'answer')" in warning
    (path := project.root / "docs" / "page.md").write_text(text, encoding="utf-8")
    live = LiveRuns(
        run=lambda snippet, target, timeout, **options: RunResult(Ending.OK, 0, ["hello"], [], 0.01)
    )
    (example,) = Sybil(
        parsers=[RecordedParser(root=project.root, live=live)], path=str(path.parent), patterns=["*.md"]
    ).parse(path)
    with pytest.raises(SybilFailure) as failure:
        example.evaluate()
    assert claims.RULE in failure.value.result and "+ answer: 42" in failure.value.result


@pytest.mark.parametrize(
    "typed, nearest",
    [
        ("lesson/a_.py", "lesson/a.py"),
        ("lesson/b.py", None),
        ("lesson/nope.py", None),
        ("lessons/b.py", "lesson/b.py"),
    ],
)
def test_a_mistyped_snippet_path_names_the_nearest_snippet(project, caplog, typed, nearest):
    if typed == "lesson/b.py":
        (project.root / "snippets" / typed).unlink()
    text = f"# Page\n\n/// recorded | {typed}\n///\n"
    hint = f"Did you mean `/// recorded | {nearest}`?"

    project.render(text)
    (warning,) = [r.getMessage() for r in caplog.records if "no such snippet" in r.getMessage()]
    assert (hint in warning) == (nearest is not None) and ("Did you mean" in warning) == (nearest is not None)
    (path := project.root / "docs" / "page.md").write_text(text, encoding="utf-8")
    parser = RecordedParser(root=project.root, live=LiveRuns(run=lambda *a: pytest.fail("ran a snippet")))
    (example,) = Sybil(parsers=[parser], path=str(path.parent), patterns=["*.md"]).parse(path)
    with pytest.raises(SybilFailure) as failure:
        example.evaluate()
    assert (hint in failure.value.result) == (nearest is not None)


def test_expect_on_is_checked_against_the_configured_targets_by_default(project, monkeypatch):
    monkeypatch.chdir(project.root)
    (name, *_) = project.store.targets.names
    assert blocks.parse("lesson/a.py", f'expect_on:\n  {name}:\n    - "x"\n').expect_on == {name: ("x",)}
    with pytest.raises(blocks.BlockError, match="unknown target"):
        blocks.parse("lesson/a.py", 'expect_on:\n  no-such-target:\n    - "x"\n')


@pytest.mark.parametrize("loader", ["SafeLoader", "CSafeLoader"])
def test_a_control_character_in_a_body_is_a_block_error_with_either_yaml_loader(monkeypatch, loader):
    # The pure-Python loader refuses a control character as soon as it is made, libyaml's on reading.
    if not hasattr(blocks.yaml, loader):
        pytest.skip(f"this PyYAML has no {loader}")
    monkeypatch.setattr(blocks, "_LOADER", getattr(blocks.yaml, loader))

    with pytest.raises(blocks.BlockError, match="not valid YAML"):
        blocks.parse("lesson/x.py", 'expect:\n  - "a\x07b"\n', ("cpu",), 10)
