"""Nothing lost, nothing injected: interrupted and concurrent recorders, hostile inputs.

The recorder runs here as a real process (it must survive a real SIGINT), on a throwaway
project; the property tests throw generated text at the claim matcher, the recording
loader and the block parser.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import markdown
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from processes import gone_soon, marker, recorder, running, started
from projects import add_snippet
from recorded.__main__ import entry
from recorded.cli import dispatch
from recorded.model import claims
from recorded.model.recording import Recording, RecordingError
from recorded.model.store import Store
from recorded.pages import blocks


def project(tmp_path: Path, snippets: dict[str, str]) -> Path:
    for name, code in snippets.items():
        add_snippet(tmp_path, f"lesson/{name}", code)
    return tmp_path


# -- Ctrl-C -------------------------------------------------------------------------------------

HANGS_WITH_CHILD = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", {mark!r} + "-child"])
time.sleep(60)
"""


def test_ctrl_c_keeps_finished_recordings_and_leaves_nothing_behind(tmp_path):
    mark = marker()
    hangs = f"b_hangs_{mark}.py"  # the snippet is marked too, by its name
    root = project(
        tmp_path / "p", {"a_fast.py": 'print("done")\n', hangs: HANGS_WITH_CHILD.format(mark=mark)}
    )
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = recorder(root, tmpdir=tmpdir)
    assert started(f"{mark}-child"), "the hanging snippet never started its child"
    assert len(running(mark)) >= 2  # the snippet and its child
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)

    assert proc.returncode == 130, err
    assert "interrupted" in err
    store = Store(root)
    fast = store.read("lesson/a_fast.py", "cpu")
    assert fast is not None and fast.stdout == ["done"]  # finished before, kept
    assert store.read(f"lesson/{hangs}", "cpu") is None  # interrupted, nothing half-written
    assert not list(root.rglob("*.tmp")), "a temporary recording file was left behind"
    assert not list(tmpdir.iterdir()), "a run's temporary folder was left behind"
    assert gone_soon(mark, within=5), "the snippet or its child outlived the interrupted run"


HANGS = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(60)", {mark!r} + "-child"])
time.sleep(60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_snippet_dies_with_a_recorder_killed_by_sigkill(tmp_path):
    # SIGKILL gives the recorder no chance to clean up; a snippet left running would load the
    # machine and turn the next timing verdicts into a coin toss.
    mark = marker()
    root = project(tmp_path / "p", {f"hangs_{mark}.py": HANGS.format(mark=mark)})
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = recorder(root, tmpdir=tmpdir)
    assert started(f"{mark}-child", alone=True), "the snippet's child never left for a session of its own"
    assert len(running(mark)) >= 2  # the snippet and a child in a session of its own
    proc.kill()
    proc.communicate(timeout=30)
    assert gone_soon(mark, within=5), "the snippet or its child outlived its recorder"


# -- two recorders at once ------------------------------------------------------------------------


def test_two_recorders_at_once_leave_only_valid_recordings(tmp_path):
    snippets = {f"s{i}.py": f'print("{i}" * 1000)\n' for i in range(6)}
    root = project(tmp_path / "p", snippets)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    procs = [recorder(root, "--force", tmpdir=tmpdir) for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    store = Store(root)
    for i in range(6):
        rec = store.read(f"lesson/s{i}.py", "cpu")
        assert rec is not None and rec.stdout == [str(i) * 1000]
    assert not list(root.rglob("*.tmp"))


# -- property-based: the claim matcher --------------------------------------------------------------

text = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\n\r"), max_size=40)


@given(text)
def test_a_line_always_matches_itself(line):
    if "..." not in line:
        assert claims.line_matches(line, line)


@given(text, st.data())
def test_a_line_with_parts_elided_still_matches(line, data):
    # Replace a random slice of the line with "...": the claim must still match the line.
    line = line.rstrip()  # trailing spaces are ignored on both sides, so leave them out here
    i = data.draw(st.integers(0, len(line)))
    j = data.draw(st.integers(i, len(line)))
    # A dot next to the inserted "..." makes the claim ambiguous (doctest reads it the same
    # way), so such cases say nothing about the matcher.
    assume(not line[:i].endswith(".") and not line[j:].startswith("."))
    assert claims.line_matches(line[:i] + "..." + line[j:], line)


@given(st.lists(text, max_size=8), st.data())
def test_an_ordered_subset_of_the_output_is_always_found(lines, data):
    chosen = sorted(data.draw(st.sets(st.integers(0, len(lines) - 1), max_size=len(lines))) if lines else [])
    wanted = [lines[i] for i in chosen if "..." not in lines[i]]
    assert None not in claims.match(wanted, lines)


@given(text, text)
def test_a_claim_without_ellipsis_matches_only_the_same_line(claim, line):
    if "..." not in claim:
        assert claims.line_matches(claim, line) == (claim.rstrip() == line.rstrip())


# -- property-based: the recording loader ---------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)
GOOD = {
    "schema": 1,
    "snippet": "lesson/a.py",
    "target": "cpu",
    "sha256": "0" * 64,
    "status": "ok",
    "exit_code": 0,
    "stdout": ["x"],
    "stderr": [],
    "duration_s": 0.1,
    "recorded_at": "2026-12-02T00:00:00Z",
    "machine": {},
}


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(st.dictionaries(st.sampled_from(sorted(GOOD)), json_values, max_size=len(GOOD)))
def test_any_json_object_is_a_recording_or_a_clear_error(tmp_path, overrides):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({**GOOD, **overrides}))
    try:
        rec = Store(tmp_path).load(path)
    except RecordingError as exc:
        assert "r.json" in str(exc) and "Fix:" in str(exc)
    else:
        assert isinstance(rec, Recording) and all(isinstance(x, str) for x in rec.stdout)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=100)
@given(st.binary(max_size=200))
def test_any_bytes_are_a_recording_or_a_clear_error(tmp_path, data):
    path = tmp_path / "r.json"
    path.write_bytes(data)
    try:
        Store(tmp_path).load(path)
    except RecordingError as exc:
        assert "r.json" in str(exc)


# -- fuzzing the block parser ----------------------------------------------------------------------

markdownish = st.lists(
    st.sampled_from(
        [
            "/// recorded | lesson/a.py",
            "/// recorded",
            "///",
            "expect:",
            '  - "x"',
            "  - ...",
            "expect_on:",
            "  cpu:",
            "    - y",
            "```",
            "~~~",
            "    indented",
            "# Heading",
            "",
            "text <b>",
            "/// recorded | ../etc/passwd",
            "unknown: 1",
            "{",
            "- [",
            ": :",
            "!!! note",
            "<script>x</script>",
        ]
    )
    | text,
    max_size=25,
).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(markdownish)
def test_block_bodies_parse_or_fail_with_a_block_error(body):
    try:
        blocks.parse("lesson/a.py", body)
    except blocks.BlockError:
        pass


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    project(root, {"a.py": 'print("<script>alert(1)</script>")\n'})
    return root


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=100, deadline=None)
@given(markdownish)
def test_random_markdown_renders_without_crashing_or_injecting(fuzz_project, page):
    md = markdown.Markdown(
        extensions=[
            "admonition",
            "pymdownx.superfences",
            "pymdownx.highlight",
            "pymdownx.tabbed",
            "recorded.pages.extension",
        ],
        extension_configs={"recorded.pages.extension": {"root": str(fuzz_project)}},
    )
    html = md.convert(page)
    assert "<script>x</script>" not in html or "<script>x</script>" in page
    assert "<script>alert(1)</script>" not in html  # recorded output is always escaped
    assert "/etc/passwd" not in html or "/etc/passwd" in page


# -- paths that leave snippets/ ----------------------------------------------------------------------


def test_a_link_out_of_snippets_is_refused_and_never_read(tmp_path):
    from recorded.model.snippets import SnippetError, load

    secret = tmp_path / "secret.py"
    secret.write_text('print("outside")\n')
    root = project(tmp_path / "p", {"ok.py": "print(1)\n"})
    (root / "snippets" / "lesson" / "escape.py").symlink_to(secret)
    with pytest.raises(SnippetError, match="outside"):
        load(root / "snippets", "lesson/escape.py")


# -- signals while the recorder starts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "code", "said"),
    [
        (signal.SIGINT, 130, "interrupted while starting"),
        (signal.SIGTERM, 143, "terminated (SIGTERM) while starting"),
    ],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_while_the_recorder_starts_ends_in_one_line(tmp_path, monkeypatch, capsys, sent, code, said):
    # The signal arrives while the recorder reads its options, before its own handling is set up.
    def arrives(*args, **kwargs):
        os.kill(os.getpid(), sent)
        time.sleep(1)  # delivered before this returns
        raise AssertionError("the signal did not stop the start")

    monkeypatch.setattr(dispatch, "program", arrives)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert entry(tmp_path, "scripts/record_runs.py") == code
    finally:
        signal.signal(signal.SIGINT, previous)

    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"scripts/record_runs.py: {said}; nothing was run or written."]
