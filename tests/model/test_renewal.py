"""Any machine, any change: which recordings must be renewed here (model/renewal.py), and an
output of an earlier version of the code kept on its tab, labelled, until its kind records
the code again.

The projects here are git checkouts where the test needs to say what "changed here" means;
the kind of machine this one is taken for is set by RECORDED_KINDS_HERE, as the suite's
every-kind tests set it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from projects import NO_GPU, Project, target
from recorded.config import targets
from recorded.model import renewal
from recorded.model.renewal import Renewal
from recorded.model.snippets import discover
from recorded.model.store import State

KINDS = (
    target(
        "big",
        "CPU with AVX-512",
        "a CPU with AVX-512",
        short="Big",
        env=NO_GPU,
        requires={"flags": ["avx512f"]},
    ),
    target(
        "small",
        "CPU with AVX2 only",
        "a CPU with AVX2 and no AVX-512",
        short="Small",
        env=NO_GPU,
        requires={"flags": ["avx2"], "absent": ["avx512f"]},
    ),
)
CODE = 'total = sum(range(5))\nprint("total:", total)\n'
PAGE = '# Sums\n\n/// recorded | lesson/01_sum.py\nexpect:\n  - "total: 10"\n///\n'
SMALL = {"cpu": {"model": "Small CPU", "cores": 2, "features": ["avx2"], "looked_for": ["avx2", "avx512f"]}}
BIG = {"cpu": {"model": "Big CPU", "cores": 8, "features": ["avx2", "avx512f"], "looked_for": ["avx512f"]}}


def git(root: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    """A committed project whose snippet both kinds recorded, on a machine taken for ``small``."""
    p = Project(tmp_path / "upstream")
    p.targets(*KINDS)
    snippet = p.snippet("lesson/01_sum.py", CODE)
    p.page("index.md", PAGE)
    p.recording(snippet, "big", ["total: 10"], machine=BIG)
    p.recording(snippet, "small", ["total: 10"], machine=SMALL)
    git(p.root, "init", "--quiet", "--initial-branch=main")
    git(p.root, "add", ".")
    git(p.root, "commit", "--quiet", "-m", "first")
    monkeypatch.setenv(renewal.KINDS_HERE, "small")
    return p


def clone(p: Project, where: Path) -> Project:
    subprocess.run(["git", "clone", "--quiet", str(p.root), str(where)], check=True)
    return Project(where)


def state(p: Project, target: str) -> State:
    return p.store.standing(discover(p.root / "snippets")[0], p.store.targets[target]).state


# -- the rule --------------------------------------------------------------------------------


def test_what_must_be_fresh_where():
    plain = targets.Target("small", "Small", frozenset({"cpu"}), "d")
    required = targets.Target("req", "Req", frozenset({"cpu"}), "d", required=True)
    mine = Renewal(here=frozenset({"small"}), recorded=frozenset({"small"}), changed=frozenset({"a.py"}))
    assert mine.why(plain, "a.py")  # changed here, this machine is the kind, and the kind holds recordings
    assert not mine.why(plain, "b.py")  # somebody else's change: a note
    assert not Renewal(here=frozenset({"small"}), changed=frozenset({"a.py"})).why(
        plain, "a.py"
    )  # never recorded
    assert not Renewal(recorded=frozenset({"small"}), changed=frozenset({"a.py"})).why(
        plain, "a.py"
    )  # another kind
    assert Renewal().why(required, "b.py") and Renewal(strict=True).why(plain, "b.py")
    assert "changed here and this machine is small" in mine.why(plain, "a.py")
    assert mine.why(plain, "b.py") == ""


def test_what_changed_here_comes_from_git(project, tmp_path):
    assert renewal.changed_snippets(project.root) == frozenset()  # nothing since the last commit
    mine = clone(project, tmp_path / "mine")
    assert renewal.changed_snippets(mine.root) == frozenset()  # a fresh clone changed nothing

    (mine.root / "snippets" / "lesson" / "01_sum.py").write_text(CODE + "print('more')\n")
    (mine.root / "snippets" / "lesson" / "02_new.py").write_text("print(1)\n")
    changed = {"lesson/01_sum.py", "lesson/02_new.py"}
    assert renewal.changed_snippets(mine.root) == changed
    git(mine.root, "switch", "--quiet", "-c", "topic")
    git(mine.root, "add", ".")
    git(mine.root, "commit", "--quiet", "-m", "mine")
    assert renewal.changed_snippets(mine.root) == changed  # committed, not yet upstream: still mine

    outside = Project(tmp_path / "plain")  # no git: nothing is known to have changed
    outside.snippet("lesson/01_sum.py", CODE)
    assert renewal.changed_snippets(outside.root) == frozenset()


def test_no_git_work_is_written_by_asking(project):
    before = (project.root / ".git" / "index").read_bytes()
    (project.root / "snippets" / "lesson" / "01_sum.py").touch()  # stat-dirty: git would refresh its index
    renewal.changed_snippets(project.root)
    assert (project.root / ".git" / "index").read_bytes() == before


# -- what the contributor, the reader and the release see -------------------------------------


def test_a_statement_added_keeps_every_output_labelled_until_renewed(project, tmp_path, capsys):
    mine = clone(project, tmp_path / "mine")
    path = mine.root / "snippets" / "lesson" / "01_sum.py"
    path.write_text(CODE + 'print("mean:", total / 5)\n')

    html = mine.render(PAGE)
    assert html.count("recorded with an earlier version of this code") == 2  # both tabs keep their output
    assert "+print(&quot;mean:&quot;, total / 5)" in html or '+print("mean:", total / 5)' in html
    assert html.count("total: 10") >= 2
    assert "This example needs attention" in html  # the change is mine and this machine is small
    assert "changed here and this machine is small" in html

    assert mine.record("--check") == 1
    out = capsys.readouterr().out
    assert "error lesson/01_sum.py on small: stale" in out and "note  lesson/01_sum.py on big: stale" in out
    assert "make record TARGET=small SNIPPETS=lesson/01_sum.py" in out or "--target small" in out

    # Renewing this machine's kind is what the contributor owes; the other stays, labelled.
    mine.recording(discover(mine.root / "snippets")[0], "small", ["total: 10", "mean: 2.0"], machine=SMALL)
    html = mine.render(PAGE)
    assert html.count("recorded with an earlier version of this code") == 1
    assert "This example needs attention" not in html
    assert mine.record("--check") == 0
    assert mine.record("--check", "--strict") == 1  # the release rule wants every kind fresh
    assert "lesson/01_sum.py on big: stale" in capsys.readouterr().out


def test_an_earlier_output_still_answers_for_the_pages_claims(project, tmp_path):
    mine = clone(project, tmp_path / "mine")
    (mine.root / "snippets" / "lesson" / "01_sum.py").write_text(CODE.replace("total:", "sum:"))
    page = PAGE.replace('"total: 10"', '"sum: 10"')
    html = mine.render(page)
    assert "does not print [&#x27;sum: 10&#x27;]" in html or "does not print ['sum: 10']" in html


def test_a_fresh_clone_passes_on_a_kind_with_no_recording(project, tmp_path, capsys):
    mine = clone(project, tmp_path / "mine")
    for path in (mine.root / "recordings" / "small").rglob("*.json"):
        path.unlink()
    assert mine.record("--check") == 0
    html = mine.render(PAGE, strict=False)
    assert "Not recorded yet on Small" in html and "This example needs attention" not in html
    (mine.root / "snippets" / "lesson" / "01_sum.py").write_text(CODE + "print('more')\n")
    assert mine.record("--check") == 0  # changed, but this kind never recorded anything: a note
    assert "note  lesson/01_sum.py on small: missing" in capsys.readouterr().out


def test_a_device_kind_with_nothing_to_detect_it_is_never_this_machine(tmp_path, monkeypatch):
    monkeypatch.delenv(renewal.KINDS_HERE, raising=False)
    p = Project(tmp_path)
    p.targets(
        *KINDS,
        target(
            "npu",
            "A made-up accelerator",
            "an accelerator with no way to find it",
            provides=["cpu", "npu"],
            device={"name": "a made-up NPU", "probe": "print('null')", "available": "False"},
        ),
    )
    known = targets.load(tmp_path)
    assert "npu" not in renewal.kinds_here(known)
    monkeypatch.setenv(renewal.KINDS_HERE, "")
    assert renewal.kinds_here(known) == []
    monkeypatch.setenv(renewal.KINDS_HERE, "npu, small")
    assert renewal.kinds_here(known) == ["small", "npu"]
