"""The busy-machine measurement around timing snippets, and the one rule that calls a run busy."""

from __future__ import annotations

import io
from pathlib import Path
from unittest import mock

import pytest

from projects import Project, add_snippet
from recorded import cli
from recorded.cli.compare import busy_line
from recorded.model import busy as rule
from recorded.model.snippets import SnippetError, discover
from recorded.model.store import Store
from recorded.recorder import busy
from recorded.recorder.record import RunLimits, plan, record, to_run

pytestmark = pytest.mark.usefixtures("fake_machine")

TIMING = "# /// script\n# [tool.recorded]\n# timing = true\n# ///\nprint('fast')\n"


def project(root: Path, code: str = TIMING) -> Store:
    add_snippet(root, "lesson/01_time.py", code)
    return Store(root)


def run(store: Store, loads: list[float], refuse: bool, force: bool = False):
    """Record with other_load faked to return ``loads`` in turn."""
    figures = iter(loads)
    out = io.StringIO()
    items = to_run(plan(store, discover(store.snippets_dir), (store.targets["cpu"],)), force)
    with mock.patch.object(busy, "other_load", lambda: (next(figures), "fake")):
        made, failed = record(store, items, RunLimits(refuse_busy=refuse), out=out)
    return made, failed, out.getvalue()


def test_proc_stat_is_read_as_busy_and_total_jiffies(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 1 2 3 4\n")
    # busy = everything but idle (800) and iowait (20); steal (10) is someone else's work
    assert busy._cpu_jiffies(stat) == (170, 990)


def test_a_window_of_other_work_is_measured_as_a_share_of_the_cpus(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 0 900 0 0 0 0\n")

    def sleep(seconds):  # during the window, others spend 30 of 100 jiffies
        stat.write_text("cpu  130 0 0 970 0 0 0 0\n")

    monkeypatch.setattr(busy.time, "sleep", sleep)
    measured = busy.other_load(0.5, stat)
    assert measured is not None
    share, how = measured
    assert share == pytest.approx(0.3) and "/proc/stat" in how


def test_a_quiet_timing_run_stores_the_figures(tmp_path):
    store = project(tmp_path)
    made, failed, out = run(store, [0.02, 0.04], refuse=True)
    assert not failed and made[0].busy == {"before": 0.02, "after": 0.04, "how": "fake", "cpus": busy.cpus()}
    assert "other load 2% before, 4% after" in out


def test_a_busy_machine_is_a_warning_and_the_figure_is_recorded(tmp_path):
    store = project(tmp_path)
    made, failed, out = run(store, [0.6, 0.5], refuse=False)
    assert not failed and made[0].busy["before"] == 0.6
    assert "warning: other work used more than 25% of the CPUs" in out and "--refuse-busy" in out


def test_refuse_busy_waits_then_refuses_and_keeps_the_old_recording(tmp_path, monkeypatch):
    monkeypatch.setattr("recorded.recorder.record.time.sleep", lambda s: None)
    store = project(tmp_path)
    run(store, [0.0, 0.0], refuse=True)
    path = store.path("lesson/01_time.py", "cpu")
    before = path.read_bytes()
    made, failed, out = run(store, [0.9, 0.9, 0.9, 0.9], refuse=True, force=True)
    assert not made and len(failed) == 1 and "refused: the machine is busy" in out
    assert path.read_bytes() == before


def test_refuse_busy_retries_a_passing_burst(tmp_path, monkeypatch):
    monkeypatch.setattr("recorded.recorder.record.time.sleep", lambda s: None)
    store = project(tmp_path)
    made, failed, _ = run(store, [0.9, 0.05, 0.05], refuse=True)
    assert not failed and made[0].busy["before"] == 0.05


def test_refuse_busy_drops_a_run_disturbed_after_it_started(tmp_path):
    store = project(tmp_path)
    made, failed, out = run(store, [0.0, 0.8], refuse=True)
    assert not made and len(failed) == 1 and "not kept (--refuse-busy)" in out
    assert not store.path("lesson/01_time.py", "cpu").exists()


def test_a_snippet_that_times_nothing_is_not_measured(tmp_path):
    store = project(tmp_path, "print('no timing')\n")
    made, _, out = run(store, [], refuse=True)  # other_load would raise StopIteration if called
    assert made[0].busy is None and "other load" not in out


def test_the_command_line_takes_refuse_busy(tmp_path, monkeypatch):
    project(tmp_path)
    monkeypatch.setattr(busy, "other_load", lambda *a, **k: (0.9, "fake"))
    monkeypatch.setattr("recorded.recorder.record.time.sleep", lambda s: None)
    assert cli.main(["--target", "cpu", "--refuse-busy"], root=tmp_path) == 1


def test_timing_must_be_true_or_false(tmp_path):
    project(tmp_path, TIMING.replace("timing = true", 'timing = "yes"'))
    with pytest.raises(SnippetError, match="timing must be true or false"):
        discover(tmp_path / "snippets")


def test_describe_and_limit():
    assert busy.describe({"before": 0.031, "after": None}) == "other load 3% before"
    assert rule.too_busy({"before": 0.26}) and not rule.too_busy({"before": 0.25, "after": 0.1})


@pytest.mark.parametrize(
    "figure, too_busy",
    [
        ({"before": 1, "after": 0}, True),  # a whole number is a share too (compare once read floats only)
        ({"before": True}, False),  # a bundle's true is no share
        ({"before": 7.0}, False),  # nor is 700%
        ({"before": "0.9"}, False),
        (None, False),  # a snippet that times nothing
    ],
)
def test_one_rule_says_busy_for_the_recorder_the_pages_and_compare(tmp_path, figure, too_busy):
    assert rule.too_busy(figure) is too_busy
    lesson = Project(tmp_path)
    rec = lesson.recording(lesson.snippet(code=TIMING), "cpu", ["fast"], busy=figure)
    page = lesson.render("# P\n\n/// recorded | lesson/x.py\n///\n")
    assert ("busy machine" in page) is too_busy
    assert bool(busy_line(rec)) is too_busy


def test_runs_one_after_another_share_the_window_between_them(tmp_path, monkeypatch):
    # Three fresh runs need four windows, not six: what was measured just after a run is how
    # busy the machine was just before the next.
    store = project(tmp_path)
    figures = iter([0.01, 0.02, 0.03, 0.04])
    items = to_run(plan(store, discover(store.snippets_dir), (store.targets["cpu"],)), False)

    monkeypatch.setattr(busy, "other_load", lambda: (next(figures), "fake"))
    made, _ = record(store, items, RunLimits(runs=3), out=io.StringIO())

    (rec,) = made
    windows = [run.busy for run in rec.runs]
    assert [(w or {}).get("before") for w in windows] == [0.01, 0.02, 0.03]
    assert [(w or {}).get("after") for w in windows] == [0.02, 0.03, 0.04]
