"""Unit tests for the recorder (scripts/record_runs.py and src/recorded).

Each test builds a throwaway project under tmp_path, with tiny snippets in
``snippets/lesson/``, and drives ``recorded.cli.main(argv, root=tmp_path)`` or the
functions under it. No snippet here imports torch; the one test that uses the real
provenance probe pays for a single ``import torch`` in a subprocess.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes import FAKE_MACHINE
from processes import WAIT_FOR, gone_soon, marker
from projects import add_snippet, with_metadata
from recorded import cli
from recorded.model import machines
from recorded.model.machines import Machine
from recorded.model.recording import Ending, Recording, RecordingError
from recorded.model.snippets import SnippetError, code_sha256, comment_free_sha256, discover, load
from recorded.model.store import State, Store, this_python
from recorded.recorder import runner, this_machine
from recorded.recorder.record import TO_RECORD, plan, record, to_run

REPO = Path(__file__).resolve().parents[2]
REAL_MACHINE = this_machine.machine
REAL_CHECK = runner.check
RECORDING_KEYS = {
    "schema",
    "snippet",
    "target",
    "sha256",
    "status",
    "exit_code",
    "stdout",
    "stderr",
    "duration_s",
    "recorded_at",
    "machine",
    "busy",
    "code_sha256",
    "code",
    "runs",
}
MACHINE_KEYS = {
    "os",
    "cpu",
    "gpu",
    "python",
    "torch",
    "numpy",
    "git",
    "compile_cache",
    "load_average",
    "target",
}
HELLO = 'print("hello")\n'
SLEEP = "import time\ntime.sleep(30)\n"
BOOM = 'print("before")\nraise ValueError("boom")\n'
NEEDS_CUDA = ("[tool.recorded]", 'requires = ["cuda"]')


pytestmark = pytest.mark.usefixtures("fake_machine")


# -- helpers ---------------------------------------------------------------------------------


def main(root: Path, *argv: str) -> int:
    return cli.main(list(argv), root=root)


def rec_path(root: Path, name: str, target: str = "cpu") -> Path:
    return root / "recordings" / target / Path(name).with_suffix(".json")


def recording(root: Path, name: str, target: str = "cpu") -> dict:
    return json.loads(rec_path(root, name, target).read_text(encoding="utf-8"))


def recordings(root: Path) -> dict[str, bytes]:
    """Every file under recordings/, by relative path, with its bytes."""
    base = root / "recordings"
    if not base.exists():
        return {}
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def set_duration(root: Path, name: str, seconds: float, target: str = "cpu") -> None:
    data = recording(root, name, target)
    data["duration_s"] = seconds
    rec_path(root, name, target).write_text(json.dumps(data), encoding="utf-8")


# -- 1. a first recording --------------------------------------------------------------------


def test_first_run_writes_a_complete_cpu_recording(tmp_path):
    path = add_snippet(
        tmp_path,
        "lesson/01_hello.py",
        """
        import sys
        print("a")
        print("b")
        print("warn", file=sys.stderr)
    """,
    )
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)

    assert main(tmp_path) == 0

    assert sorted(recordings(tmp_path)) == ["cpu/lesson/01_hello.json"]
    rec = recording(tmp_path, "lesson/01_hello.py")
    assert set(rec) == RECORDING_KEYS
    assert rec["schema"] == 3
    assert rec["snippet"] == "lesson/01_hello.py"
    assert rec["target"] == "cpu"
    assert rec["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (rec["status"], rec["exit_code"]) == ("ok", 0)
    assert rec["stdout"] == ["a", "b"]
    assert rec["stderr"] == ["warn"]
    assert isinstance(rec["duration_s"], float) and 0 <= rec["duration_s"] < 10
    assert rec["recorded_at"].endswith("Z")
    when = dt.datetime.fromisoformat(rec["recorded_at"].removesuffix("Z")).replace(tzinfo=dt.UTC)
    assert before <= when <= dt.datetime.now(dt.UTC)
    target = rec["machine"].pop("target")
    assert rec["machine"] == FAKE_MACHINE
    assert target == {
        "name": "cpu",
        "description": "the CPU, with every GPU hidden",
        "env": {"CUDA_VISIBLE_DEVICES": ""},
        "check": None,
    }


def test_first_run_records_the_real_machine_with_the_real_probe(tmp_path, monkeypatch):
    monkeypatch.setattr(this_machine, "machine", REAL_MACHINE)
    add_snippet(tmp_path, "lesson/01_hello.py", HELLO)
    git = [
        "git",
        "-C",
        str(tmp_path),
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "-c",
        "commit.gpgsign=false",
    ]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "snippets"], check=True)
    subprocess.run([*git, "commit", "-qm", "snippet"], check=True)
    rev_parse = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    head = rev_parse.stdout.strip()

    assert main(tmp_path) == 0

    machine = recording(tmp_path, "lesson/01_hello.py")["machine"]
    assert set(machine) == MACHINE_KEYS
    assert machine["os"] == platform.platform()
    assert machine["cpu"]["model"] and isinstance(machine["cpu"]["model"], str)
    assert isinstance(machine["cpu"]["cores"], int) and machine["cpu"]["cores"] >= 1
    assert set(machine["cpu"]["features"]) <= set(machines.FEATURES)
    assert machine["python"] == platform.python_version()
    assert machine["gpu"] is None  # the cpu target hides every GPU from the probe too
    for package in ("torch", "numpy"):
        assert machine[package] is None or isinstance(machine[package], str)
    assert machine["git"] == {"commit": head, "dirty": False}
    assert machine["compile_cache"] == "cold"


def test_progress_names_each_run_its_duration_and_status(tmp_path, monkeypatch):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", BOOM)
    store = Store(tmp_path)
    out = io.StringIO()
    monkeypatch.setattr(this_machine, "machine", lambda root, env, device: {"made for": device})

    made, failed = record(
        store, to_run(plan(store, discover(store.snippets_dir), (store.targets["cpu"],)), False), out=out
    )

    text = out.getvalue()
    assert "[1/2] lesson/01_a.py cpu … " in text and " s ok\n" in text
    assert "[2/2] lesson/02_b.py cpu … " in text and " s error\n" in text
    assert "| ValueError: boom" in text
    assert [r.snippet for r in made] == ["lesson/01_a.py", "lesson/02_b.py"]
    assert [i.snippet.name for i in failed] == ["lesson/02_b.py"]
    assert made[0].machine["made for"] is None  # the cpu target's device
    assert made[0].machine["target"]["name"] == "cpu"


def test_progress_gives_an_eta_from_earlier_durations(tmp_path):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    assert main(tmp_path) == 0
    set_duration(tmp_path, "lesson/01_a.py", 4.0)
    set_duration(tmp_path, "lesson/02_b.py", 6.0)
    store = Store(tmp_path)
    out = io.StringIO()

    record(store, to_run(plan(store, discover(store.snippets_dir), (store.targets["cpu"],)), True), out=out)

    assert "[1/2] lesson/01_a.py cpu (ETA 10 s) …" in out.getvalue()
    assert "[2/2] lesson/02_b.py cpu (ETA 6 s) …" in out.getvalue()


# -- 2. incremental by default ---------------------------------------------------------------


def test_second_run_runs_nothing_and_leaves_files_byte_identical(tmp_path, runs, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    assert main(tmp_path) == 0
    first = recordings(tmp_path)
    runs.clear()

    assert main(tmp_path) == 0

    assert runs == []
    assert recordings(tmp_path) == first
    assert "nothing to record on cpu: 2 fresh" in capsys.readouterr().err


def test_editing_one_snippet_rerecords_only_that_one(tmp_path, runs):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    assert main(tmp_path) == 0
    first = recordings(tmp_path)
    runs.clear()

    add_snippet(tmp_path, "lesson/02_b.py", 'print("changed")\n')
    assert main(tmp_path) == 0

    assert runs == [("lesson/02_b.py", "cpu")]
    assert recordings(tmp_path)["cpu/lesson/01_a.json"] == first["cpu/lesson/01_a.json"]
    assert recording(tmp_path, "lesson/02_b.py")["stdout"] == ["changed"]


def test_force_rerecords_every_snippet(tmp_path, runs):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    assert main(tmp_path) == 0
    runs.clear()

    assert main(tmp_path, "--force") == 0

    assert runs == [("lesson/01_a.py", "cpu"), ("lesson/02_b.py", "cpu")]


@pytest.mark.parametrize("prefix", ["", "snippets/", "./snippets/"])
def test_named_snippets_are_the_only_ones_recorded(tmp_path, runs, prefix):
    for name in ("lesson/01_a.py", "lesson/02_b.py", "lesson/03_c.py"):
        add_snippet(tmp_path, name, HELLO)

    assert main(tmp_path, f"{prefix}lesson/01_a.py", f"{prefix}lesson/03_c.py") == 0

    assert runs == [("lesson/01_a.py", "cpu"), ("lesson/03_c.py", "cpu")]
    assert sorted(recordings(tmp_path)) == ["cpu/lesson/01_a.json", "cpu/lesson/03_c.json"]


def test_unknown_snippet_exits_2_naming_it(tmp_path, runs, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)

    assert main(tmp_path, "lesson/99_nope.py") == 2

    err = capsys.readouterr().err
    assert "'lesson/99_nope.py'" in err and "no such snippet" in err
    assert runs == [] and recordings(tmp_path) == {}


@pytest.mark.parametrize(
    "name", ["../outside.py", "snippets/../outside.py", "lesson/../../outside.py", "/tmp/outside.py"]
)
def test_path_outside_snippets_exits_2(tmp_path, runs, capsys, name):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    (tmp_path / "outside.py").write_text(HELLO)

    assert main(tmp_path, name) == 2

    assert "name a file under snippets/ with a relative path" in capsys.readouterr().err
    assert runs == [] and recordings(tmp_path) == {}


def test_snippet_needing_cuda_is_not_run_on_cpu(tmp_path, runs, capsys):
    add_snippet(
        tmp_path,
        "lesson/01_gpu.py",
        """
        # /// script
        # [tool.recorded]
        # requires = ["cuda"]
        # ///
        print("gpu")
    """,
    )

    assert main(tmp_path) == 0

    assert runs == [] and recordings(tmp_path) == {}
    assert "0 fresh, 1 not applicable" in capsys.readouterr().err


# -- 3. --check and --list -------------------------------------------------------------------


def test_list_groups_snippets_by_lesson_declared_ones_first_under_their_titles(tmp_path, runs, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.recorded.lessons.zeta]\ntitle = "Lesson 8: Zeta"\npages = ["zeta.md"]\n', encoding="utf-8"
    )
    add_snippet(tmp_path, "alpha/01_a.py", HELLO)
    add_snippet(tmp_path, "zeta/01_z.py", HELLO)
    capsys.readouterr()

    assert main(tmp_path, "--list", "--target", "cpu") == 0

    lines = capsys.readouterr().out.splitlines()[1:]
    assert [line.split()[0] if not line.startswith("==") else line for line in lines] == [
        "== Lesson 8: Zeta (snippets/zeta/)",
        "zeta/01_z.py",
        "== alpha (snippets/alpha/)",
        "alpha/01_a.py",
    ]


def test_a_badly_declared_lesson_is_named_and_nothing_runs(tmp_path, runs, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.recorded.lessons.zeta]\ntitle = "Zeta"\npages = "zeta.md"\n', encoding="utf-8"
    )
    add_snippet(tmp_path, "zeta/01_z.py", HELLO)
    capsys.readouterr()

    assert main(tmp_path, "--list") == 2
    err = capsys.readouterr().err
    assert (
        "[tool.recorded.lessons.zeta] pages must be a list of pages under docs/" in err and "'zeta.md'" in err
    )
    assert runs == []


def fix_line(name: str, target: str = "cpu") -> str:
    """The fix line for a project that names no commands of its own: the engine's default."""
    return f"      fix: python -m recorded --target {target} {name}"


def test_check_reports_a_missing_cpu_recording_with_its_fix_and_exits_1(tmp_path, runs, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)

    assert main(tmp_path, "--check") == 1

    out = capsys.readouterr().out.splitlines()
    assert (
        "error lesson/01_a.py on cpu: missing (not recorded yet); it must be fresh: cpu is marked required"
        in out
    )
    assert fix_line("lesson/01_a.py") in out
    assert runs == [] and recordings(tmp_path) == {}


@pytest.mark.parametrize(
    ("code", "edited", "recorded", "state"),
    [
        (HELLO, 'print("edited")\n', 0, "stale (recorded with an earlier version of its code)"),
        (BOOM, None, 1, "failed (the last run ended with status error)"),
    ],
    ids=["stale", "failed"],
)
def test_check_reports_a_stale_or_failed_cpu_recording(tmp_path, capsys, code, edited, recorded, state):
    add_snippet(tmp_path, "lesson/01_a.py", code)
    assert main(tmp_path, "--target", "cpu") == recorded
    if edited:
        add_snippet(tmp_path, "lesson/01_a.py", edited)
    capsys.readouterr()

    assert main(tmp_path, "--check") == 1

    out = capsys.readouterr().out.splitlines()
    assert f"error lesson/01_a.py on cpu: {state}; it must be fresh: cpu is marked required" in out
    assert fix_line("lesson/01_a.py") in out


def test_check_notes_missing_cuda_recordings_and_passes_unless_strict(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    assert main(tmp_path) == 0
    capsys.readouterr()

    assert main(tmp_path, "--check") == 0
    out = capsys.readouterr().out.splitlines()
    assert "note  lesson/01_a.py on cuda: missing (not recorded yet)" in out
    assert fix_line("lesson/01_a.py", "cuda") in out
    assert out[-1] == "1 fresh, 1 to record (0 required), 0 not applicable"

    assert main(tmp_path, "--check", "--strict") == 1
    assert "error lesson/01_a.py on cuda: missing (not recorded yet)" in capsys.readouterr().out


def test_check_passes_when_every_cpu_recording_is_fresh(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    assert main(tmp_path) == 0
    capsys.readouterr()

    assert main(tmp_path, "--check", "--target", "cpu") == 0

    assert capsys.readouterr().out.splitlines() == ["1 fresh, 0 to record (0 required), 0 not applicable"]


def test_list_shows_every_snippet_and_target_with_state_and_last_duration(tmp_path, runs, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    add_snippet(tmp_path, "lesson/03_gpu.py", with_metadata(HELLO, *NEEDS_CUDA))
    assert main(tmp_path, "lesson/01_a.py") == 0
    set_duration(tmp_path, "lesson/01_a.py", 12.34)
    runs.clear()
    capsys.readouterr()

    assert main(tmp_path, "--list") == 0

    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    when = recording(tmp_path, "lesson/01_a.py")["recorded_at"]
    assert rows == [
        ["==", "lesson", "(snippets/lesson/)"],  # a folder without a lesson entry: titled by its name
        ["lesson/01_a.py", "cpu", "fresh", "12.3", "s", when],
        ["lesson/01_a.py", "cuda", "missing", "-", "-"],
        ["lesson/02_b.py", "cpu", "missing", "-", "-"],
        ["lesson/02_b.py", "cuda", "missing", "-", "-"],
        ["lesson/03_gpu.py", "cpu", "not", "applicable", "-", "-"],
        ["lesson/03_gpu.py", "cuda", "missing", "-", "-"],
    ]
    assert runs == []


# -- 4. timeouts -----------------------------------------------------------------------------


def test_timeout_keeps_the_previous_good_recording_byte_for_byte(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    assert main(tmp_path) == 0
    good = recordings(tmp_path)

    add_snippet(tmp_path, "lesson/01_a.py", SLEEP)
    assert main(tmp_path, "--timeout", "0.5") == 1

    assert recordings(tmp_path) == good
    err = capsys.readouterr().err
    assert "lesson/01_a.py on cpu: timeout, exit code None (the previous good recording is kept)" in err
    assert "recorded 0 of 1 on cpu; 1 failed" in err


def test_timeout_without_previous_recording_writes_a_timeout_recording(tmp_path):
    add_snippet(tmp_path, "lesson/01_sleep.py", 'print("started", flush=True)\n' + SLEEP)

    started = time.monotonic()
    assert main(tmp_path, "--timeout", "0.5") == 1
    assert time.monotonic() - started < 5

    rec = recording(tmp_path, "lesson/01_sleep.py")
    assert (rec["status"], rec["exit_code"]) == ("timeout", None)
    assert rec["stdout"] == ["started"]
    assert rec["stderr"][-1] == "[recorder: stopped after the 0.5 s timeout]"
    assert 0.5 <= rec["duration_s"] < 5


def test_snippet_timeout_from_its_metadata_applies(tmp_path):
    add_snippet(tmp_path, "lesson/01_sleep.py", with_metadata(SLEEP, "[tool.recorded]", "timeout = 0.3"))

    assert main(tmp_path) == 1

    last = recording(tmp_path, "lesson/01_sleep.py")["stderr"][-1]
    assert last == "[recorder: stopped after the 0.3 s timeout]"


def test_timeout_leaves_no_process_of_the_snippet_behind(tmp_path):
    mark = marker()
    name = f"lesson/01_spawn_{mark}.py"  # the snippet is marked by its name, its child by an argument
    add_snippet(
        tmp_path,
        name,
        f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", {mark!r}])
        {WAIT_FOR.format(mark=mark).strip().replace(chr(10), chr(10) + " " * 8)}
        print("the child runs", flush=True)
        time.sleep(30)
    """,
    )

    assert main(tmp_path, "--timeout", "3") == 1

    rec = recording(tmp_path, name)
    assert rec["status"] == "timeout" and rec["stdout"] == ["the child runs"]
    assert gone_soon(mark), "the snippet or its child outlived the timeout"


def test_a_finished_snippet_leaves_no_background_child_behind(tmp_path):
    mark = marker()
    add_snippet(
        tmp_path,
        "lesson/01_spawn.py",
        f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", {mark!r}])
        {WAIT_FOR.format(mark=mark).strip().replace(chr(10), chr(10) + " " * 8)}
        print("done")
    """,
    )

    assert main(tmp_path, "--timeout", "10") == 0

    assert recording(tmp_path, "lesson/01_spawn.py")["stdout"] == ["done"]
    assert gone_soon(mark)


# -- 5. failing snippets ---------------------------------------------------------------------


def test_failing_snippet_is_recorded_as_error_and_the_others_still_run(tmp_path, runs):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_boom.py", BOOM)
    add_snippet(tmp_path, "lesson/03_c.py", HELLO)

    assert main(tmp_path) == 1

    assert [name for name, _ in runs] == ["lesson/01_a.py", "lesson/02_boom.py", "lesson/03_c.py"]
    rec = recording(tmp_path, "lesson/02_boom.py")
    assert (rec["status"], rec["exit_code"]) == ("error", 1)
    assert rec["stdout"] == ["before"]
    assert rec["stderr"][0] == "Traceback (most recent call last):"
    assert rec["stderr"][-1] == "ValueError: boom"
    assert recording(tmp_path, "lesson/01_a.py")["status"] == "ok"
    assert recording(tmp_path, "lesson/03_c.py")["status"] == "ok"


@pytest.mark.parametrize(
    "code, exit_code, last_line",
    [
        ("import sys\nsys.exit(3)\n", 3, None),
        (
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
            -9,
            "[recorder: killed by signal SIGKILL]",
        ),
    ],
    ids=["exit-3", "sigkill"],
)
def test_non_zero_exit_is_an_error(tmp_path, code, exit_code, last_line):
    add_snippet(tmp_path, "lesson/01_exit.py", code)

    assert main(tmp_path) == 1

    rec = recording(tmp_path, "lesson/01_exit.py")
    assert (rec["status"], rec["exit_code"]) == ("error", exit_code)
    assert rec["stderr"][-1:] == ([last_line] if last_line else [])


def test_failing_run_keeps_the_previous_good_recording(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    assert main(tmp_path) == 0
    good = recordings(tmp_path)

    add_snippet(tmp_path, "lesson/01_a.py", BOOM)
    assert main(tmp_path) == 1

    assert recordings(tmp_path) == good
    err = capsys.readouterr().err
    assert "(the previous good recording is kept)" in err
    assert "    | ValueError: boom" in err


def test_a_failed_recording_is_replaced_by_the_next_failure(tmp_path):
    add_snippet(tmp_path, "lesson/01_a.py", BOOM)
    assert main(tmp_path) == 1
    add_snippet(tmp_path, "lesson/01_a.py", 'raise KeyError("other")\n')

    assert main(tmp_path) == 1

    assert recording(tmp_path, "lesson/01_a.py")["stderr"][-1] == "KeyError: 'other'"


def test_fail_fast_stops_after_the_first_failure(tmp_path, runs):
    add_snippet(tmp_path, "lesson/01_boom.py", BOOM)
    add_snippet(tmp_path, "lesson/02_boom.py", BOOM)
    add_snippet(tmp_path, "lesson/03_ok.py", HELLO)

    assert main(tmp_path, "--fail-fast") == 1

    assert runs == [("lesson/01_boom.py", "cpu")]
    assert sorted(recordings(tmp_path)) == ["cpu/lesson/01_boom.json"]


# -- 6. the cuda target on a machine without a GPU -------------------------------------------


def test_target_cuda_without_an_nvidia_driver_exits_2_and_writes_nothing(tmp_path, runs, capsys, monkeypatch):
    monkeypatch.setattr(runner, "check", REAL_CHECK)  # the built-in cuda target's own look
    monkeypatch.setattr(runner.Target, "detected", lambda self: not self.detect)
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)

    assert main(tmp_path, "--target", "cuda") == 2

    err = capsys.readouterr().err
    assert "--target cuda: none of /proc/driver/nvidia, nvidia-smi is on this machine" in err
    assert "Nothing was recorded" in err
    assert runs == [] and not (tmp_path / "recordings").exists()


def test_target_cuda_when_torch_sees_no_gpu_exits_2_and_writes_nothing(tmp_path, runs, capsys, monkeypatch):
    # A driver, but the check (torch.cuda.is_available()) prints False: run for real with
    # an interpreter that prints what a torch without a usable GPU would.
    monkeypatch.setattr(runner, "check", REAL_CHECK)
    monkeypatch.setattr(runner.Target, "detected", lambda self: True)
    fake_torch = tmp_path / "fake" / "torch"
    fake_torch.mkdir(parents=True)
    (fake_torch / "__init__.py").write_text(
        "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)

    assert main(tmp_path, "--target", "cuda") == 2

    assert "--target cuda: its check printed 'False', not 'True'" in capsys.readouterr().err
    assert runs == [] and not (tmp_path / "recordings").exists()


def test_default_records_every_target_this_machine_can_run_and_says_which_it_skipped(
    tmp_path, runs, capsys, fake_machine
):
    fake_machine.failing["cuda"] = "torch sees no usable CUDA device"
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)

    assert main(tmp_path) == 0

    assert runs == [("lesson/01_a.py", "cpu")]
    assert (
        "skipped cuda: this machine cannot run it (torch sees no usable CUDA device)"
        in capsys.readouterr().err
    )
    assert not rec_path(tmp_path, "lesson/01_a.py", "cuda").exists()


def test_target_auto_falls_back_to_cpu_when_torch_sees_no_gpu(tmp_path, runs, fake_machine):
    fake_machine.failing["cuda"] = "torch sees no usable CUDA device"
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)

    assert main(tmp_path, "--target", "auto") == 0

    assert runs == [("lesson/01_a.py", "cpu")]


# -- 7. the environment a snippet runs in ----------------------------------------------------

ENV_REPORT = """
    import json, os
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    print(json.dumps({
        "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cwd": os.getcwd(),
        "files": os.listdir("."),
        "cache": cache,
        "cache_exists": cache is not None and os.path.exists(cache),
    }))
"""


def test_cpu_target_hides_gpus_and_runs_in_a_fresh_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.chdir(tmp_path)  # so a snippet that merely inherited our folder would show
    add_snippet(tmp_path, "lesson/01_env.py", ENV_REPORT)

    assert main(tmp_path) == 0
    first = json.loads(recording(tmp_path, "lesson/01_env.py")["stdout"][0])
    assert main(tmp_path, "--force") == 0
    second = json.loads(recording(tmp_path, "lesson/01_env.py")["stdout"][0])

    assert first["cuda"] == ""
    cwd = Path(first["cwd"])
    assert cwd.parent.name.startswith("record-runs-") and first["files"] == []
    assert tmp_path not in cwd.parents and cwd != tmp_path
    assert not cwd.exists()  # removed after the run
    assert Path(first["cache"]).parent == cwd and not first["cache_exists"]
    assert second["cwd"] != first["cwd"] and second["cache"] != first["cache"]


def test_cuda_target_keeps_the_callers_gpu_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")

    env = runner.target_env(Store(tmp_path).targets.get("cuda"), tmp_path)

    assert env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "torchinductor-cache")


# -- 8. output capture -----------------------------------------------------------------------


def test_invalid_utf8_output_is_replaced_not_fatal(tmp_path):
    add_snippet(
        tmp_path,
        "lesson/01_bytes.py",
        r"""
        import sys
        sys.stdout.buffer.write(b"caf\xe9 ok\n\xff\xfe\n")
        sys.stderr.buffer.write(b"bad \x80 byte\n")
    """,
    )

    assert main(tmp_path) == 0

    rec = recording(tmp_path, "lesson/01_bytes.py")
    assert rec["status"] == "ok"
    assert rec["stdout"] == ["caf\ufffd ok", "\ufffd\ufffd"]
    assert rec["stderr"] == ["bad \ufffd byte"]


def test_output_over_1_mb_is_cut_with_the_number_of_bytes_dropped(tmp_path):
    # 15,000 lines of 100 bytes on each stream: 1,500,000 bytes, of which 1,000,000 are kept.
    add_snippet(
        tmp_path,
        "lesson/01_flood.py",
        """
        import sys
        sys.stdout.write(("y" * 99 + "\\n") * 15_000)
        sys.stderr.write(("e" * 99 + "\\n") * 15_000)
        print("done")
    """,
    )

    assert main(tmp_path) == 0

    rec = recording(tmp_path, "lesson/01_flood.py")
    assert rec["status"] == "ok"
    assert rec["stdout"][:-1] == ["y" * 99] * 10_000
    assert rec["stdout"][-1] == "[recorder: output cut here, 500005 more bytes not kept]"
    assert rec["stderr"][:-1] == ["e" * 99] * 10_000
    assert rec["stderr"][-1] == "[recorder: output cut here, 500000 more bytes not kept]"


# -- 9. the real repository: nothing stale, no torch -----------------------------------------

NO_TORCH = """
import sys, time
sys.path.insert(0, "src")
from pathlib import Path
from recorded.cli import main
started = time.perf_counter()
codes = [main(argv, root=Path.cwd()) for argv in ({argvs})]
seconds = time.perf_counter() - started
assert "torch" not in sys.modules, "the recorder imported torch"
assert "numpy" not in sys.modules, "the recorder imported numpy"
print(codes, round(seconds, 3))
"""


def python_in_repo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


def test_check_and_list_on_the_real_repository_never_import_torch():
    done = python_in_repo("-c", NO_TORCH.format(argvs='["--check"], ["--list"]'))

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith(("[0, 0]", "[1, 0]"))


def test_real_script_with_nothing_stale_exits_0_without_importing_torch():
    store = Store(REPO)
    # The CPU kind this machine is: the only one a plain run could record here.
    cpu = next(
        (t for t in machines.targets_here(store.targets) if not store.targets.get(t).needs_device), None
    )
    if cpu is None:
        pytest.skip("this machine is none of the repository's CPU kinds")
    stale = [
        f"{i.snippet.name} ({i.state.value})"
        for i in plan(store, discover(store.snippets_dir), (store.targets[cpu],))
        if i.state in TO_RECORD
    ]
    if stale:
        # This test checks the nothing-to-do path, and tests never write recordings.
        pytest.skip(f"{cpu} recordings to make first: {stale}; run .venv/bin/python scripts/record_runs.py")
    argv = ["--target", cpu]

    script = python_in_repo("scripts/record_runs.py", *argv)
    assert script.returncode == 0, script.stderr
    assert f"nothing to record on {cpu}" in script.stderr

    done = python_in_repo("-c", NO_TORCH.format(argvs=f"{argv!r},"))
    assert done.returncode == 0, done.stderr
    codes, seconds = done.stdout.splitlines()[-1].rsplit(" ", 1)
    assert codes == "[0]"
    assert float(seconds) < 1.0


# -- 9b. the command line names the command the user ran ------------------------------------


def test_fix_lines_name_the_projects_one_command_and_errors_the_command_the_user_ran(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.recorded]\ncommands = { all = "make record", one = "make record TARGET={target} SNIPPETS={snippet}" }\n'
    )
    started = [cli.MODULE, str(tmp_path / "scripts" / "record_runs.py"), None]

    for prog in started:
        assert cli.main(["--check"], root=tmp_path, prog=prog) == 1
        # However the recorder was started, a fix is the one form that works from a fresh clone.
        assert "fix: make record TARGET=cpu SNIPPETS=lesson/01_a.py" in capsys.readouterr().out
        assert cli.main(["--target", "tpu"], root=tmp_path, prog=prog) == 2
        name = "python -m recorded" if prog == cli.MODULE else "scripts/record_runs.py"
        assert capsys.readouterr().err.startswith(f"{name}: --target: unknown target 'tpu'")


def test_help_from_python_m_recorded_names_that_command():
    done = subprocess.run(
        [sys.executable, "-m", "recorded", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        check=False,
    )
    command = f"{this_python(REPO)} -m recorded"  # .venv/bin/python -m recorded, as typed here

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {command} ")
    assert f"  {command} --check\n" in done.stdout and "record_runs.py" not in done.stdout


def test_a_shard_is_computed_once_per_target_and_said_once(tmp_path, capsys, monkeypatch):
    from recorded.recorder import shard

    for n in range(3):
        add_snippet(tmp_path, f"lesson/0{n}_a.py", HELLO)
    computed = []

    def spy(published, snippets, target, which):
        computed.append(target.name)
        return real(published, snippets, target, which)

    real = shard.take
    monkeypatch.setattr(shard, "take", spy)

    assert main(tmp_path, "--shard", "1/2", "--target", "cpu") == 0
    assert computed == ["cpu"]
    assert capsys.readouterr().err.count("shard 1/2 on cpu takes 2 of 3 snippets") == 1
    assert main(tmp_path, "--check", "--shard", "2/2", "--target", "cpu") == 1  # 1 of 3 recorded
    assert computed == ["cpu", "cpu"]
    assert capsys.readouterr().err.count("shard 2/2 on cpu takes ") == 1


# -- 10. the store: atomic writes, recordings in the right place -----------------------------


def a_recording(name: str = "lesson/01_a.py", target: str = "cpu", status: str = "ok") -> Recording:
    return Recording(
        snippet=name,
        target=target,
        sha256="0" * 64,
        status=Ending(status),
        exit_code=0,
        stdout=["hello"],
        stderr=[],
        duration_s=0.1,
        recorded_at="2026-01-01T00:00:00Z",
        machine=Machine(FAKE_MACHINE),
    )


def test_store_write_leaves_no_temporary_file_behind(tmp_path):
    store = Store(tmp_path)

    path = store.write(a_recording())
    store.write(a_recording())  # and again, over the first

    assert sorted(p.name for p in path.parent.iterdir()) == ["01_a.json"]
    assert store.load(path) == a_recording()


def test_store_write_that_fails_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    store = Store(tmp_path)
    path = store.write(a_recording())
    before = path.read_bytes()

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        store.write(a_recording(status="error"))

    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["01_a.json"]


@pytest.mark.parametrize(
    "held", [("lesson/01_a.py", "cpu"), ("lesson/02_b.py", "cuda")], ids=["other-snippet", "other-target"]
)
def test_recording_in_the_wrong_place_is_an_error_naming_the_file(tmp_path, capsys, held):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    wrong = rec_path(tmp_path, "lesson/02_b.py", "cpu")
    wrong.parent.mkdir(parents=True)
    wrong.write_text(a_recording(*held).to_json(), encoding="utf-8")
    store = Store(tmp_path)

    with pytest.raises(RecordingError, match="recordings/cpu/lesson/02_b.json: holds"):
        store.read("lesson/02_b.py", "cpu")
    assert main(tmp_path, "--check") == 1
    assert (
        "error lesson/02_b.py on cpu: invalid (recordings/cpu/lesson/02_b.json: holds "
        f"{held[0]} on {held[1]}, but its place says lesson/02_b.py on cpu"
    ) in capsys.readouterr().out


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"schema": 1}', '{"schema": 99}'],
    ids=["not-json", "fields-missing", "other-schema"],
)
def test_unreadable_recording_is_invalid_and_re_recorded(tmp_path, capsys, content):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    path = rec_path(tmp_path, "lesson/01_a.py")
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")

    assert main(tmp_path, "--check") == 1
    out = capsys.readouterr().out
    assert "error lesson/01_a.py on cpu: invalid (recordings/cpu/lesson/01_a.json: " in out

    assert main(tmp_path) == 0
    assert recording(tmp_path, "lesson/01_a.py")["status"] == "ok"


# -- 11. malformed snippet metadata ----------------------------------------------------------

BAD_METADATA = {
    "bad toml": ("# requires = [cuda\n", "the '# /// script' block is not valid TOML"),
    "unknown key": (
        "# [tool.recorded]\n# timout = 5\n",
        "unknown key(s) ['timout'] under [tool.recorded]",
    ),
    "requires a string": ('# [tool.recorded]\n# requires = "cuda"\n', "requires must be a list"),
    "requires unknown hardware": ('# [tool.recorded]\n# requires = ["tpu"]\n', "requires must be a list"),
    "requires a nested list": ('# [tool.recorded]\n# requires = [["cuda"]]\n', "requires must be a list"),
    "recorded not a table": ("# [tool]\n# recorded = 5\n", "[tool.recorded] must be a table"),
    "tool not a table": ('# tool = "recorded"\n', "[tool.recorded] must be a table"),
    "timeout zero": ("# [tool.recorded]\n# timeout = 0\n", "timeout must be a positive number"),
    "timeout text": ('# [tool.recorded]\n# timeout = "10"\n', "timeout must be a positive number"),
    "dependencies a string": ('# dependencies = "torch"\n', "dependencies must be a list of strings"),
}


@pytest.mark.parametrize("header, message", BAD_METADATA.values(), ids=BAD_METADATA.keys())
def test_malformed_metadata_is_a_snippet_error_naming_the_file(tmp_path, runs, capsys, header, message):
    add_snippet(tmp_path, "lesson/01_ok.py", HELLO)
    add_snippet(tmp_path, "lesson/02_bad.py", f"# /// script\n{header}# ///\n{HELLO}")

    with pytest.raises(SnippetError) as raised:
        load(tmp_path / "snippets", "lesson/02_bad.py")
    assert str(raised.value).startswith("lesson/02_bad.py: ")
    assert message in str(raised.value)

    assert main(tmp_path) == 2
    assert main(tmp_path, "--check") == 2
    err = capsys.readouterr().err
    assert "record_runs.py: lesson/02_bad.py: " in err and message in err
    assert runs == [] and recordings(tmp_path) == {}


def test_two_metadata_blocks_are_a_snippet_error(tmp_path):
    block = "# /// script\n# dependencies = []\n# ///\n"
    add_snippet(tmp_path, "lesson/01_twice.py", block + "x = 1\n" + block + HELLO)

    with pytest.raises(SnippetError, match=r"^lesson/01_twice.py: more than one '# /// script' block"):
        load(tmp_path / "snippets", "lesson/01_twice.py")


def test_well_formed_metadata_is_read_and_hidden_from_readers(tmp_path):
    add_snippet(
        tmp_path,
        "lesson/01_gpu.py",
        """
        # /// script
        # dependencies = ["torch"]
        # [tool.recorded]
        # requires = ["cuda"]
        # timeout = 600
        # ///
        print("gpu")
    """,
    )

    snippet = load(tmp_path / "snippets", "lesson/01_gpu.py")

    assert snippet.requires == {"cuda"} and snippet.timeout == 600.0
    assert snippet.dependencies == ("torch",)
    assert [t.name for t in Store(tmp_path).targets if snippet.runs_on(t)] == ["cuda"]
    assert snippet.display_source() == 'print("gpu")\n'


def test_timeout_option_must_be_positive(tmp_path):
    with pytest.raises(SystemExit) as raised:
        main(tmp_path, "--timeout", "0")
    assert raised.value.code == 2


def test_a_listing_piped_into_head_ends_without_a_traceback():
    # `record_runs.py --list | head -1`: head closes the pipe after one line.
    done = subprocess.run(
        f"{sys.executable} {REPO / 'scripts' / 'record_runs.py'} --list | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.startswith("snippet")
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr


# -- the freshness key and older recordings ------------------------------------------------------

KEYED = '''\
# /// script
# [tool.recorded]
# timeout = 30
# ///
"""A docstring is not what runs."""
x = 1  # a comment
print(f"{x} # not a comment", "# nor this")
print(f"{x!r:>{x + 1}}")  # a nested format field: 3.12.1 parses it with an extra empty part


def f():
    return x


if x:
    y = f()
z = 2
'''


def edited(change: str) -> str:
    return {
        "comments": KEYED.replace("# a comment", "# a better comment").replace("timeout = 30", "timeout = 9")
        + "# region helpers\n# endregion\n",
        "blank lines and trailing spaces": KEYED.replace("x = 1", "x = 1   ").replace("\n\n\n", "\n\n\n\n\n"),
        "the docstring": KEYED.replace("is not", "is still not"),
        "a docstring added": KEYED.replace("    return x", '    """Gives x."""\n    return x'),
        "indentation": KEYED.replace("    return x", "        return x"),
        "a line re-wrapped": KEYED.replace('"# nor this")', '\n    "# nor this",\n)'),
        "a string": KEYED.replace("nor this", "nor that"),
        "a number's type": KEYED.replace("z = 2", "z = 2.0"),
        "a statement added": KEYED + "print(z)\n",
        "a line moved into a block": KEYED.replace("\nz = 2", "\n    z = 2"),
        "a docstring the code reads": KEYED.replace("z = 2", "z = __doc__").replace("is not", "is now"),
    }[change]


@pytest.mark.parametrize(
    ("change", "state"),
    [
        # edits that cannot change what the snippet runs
        ("comments", State.FRESH),
        ("blank lines and trailing spaces", State.FRESH),
        ("the docstring", State.FRESH),
        ("a docstring added", State.FRESH),
        ("indentation", State.FRESH),
        ("a line re-wrapped", State.FRESH),
        # any edit that can
        ("a string", State.STALE),
        ("a number's type", State.STALE),
        ("a statement added", State.STALE),
        ("a line moved into a block", State.STALE),
        ("a docstring the code reads", State.STALE),
    ],
)
def test_only_an_edit_that_can_change_what_runs_makes_the_recording_stale(tmp_path, change, state):
    base = KEYED.replace("z = 2", "z = __doc__") if change == "a docstring the code reads" else KEYED
    add_snippet(tmp_path, "lesson/01_a.py", base)
    assert main(tmp_path) == 0
    (tmp_path / "snippets" / "lesson" / "01_a.py").write_text(edited(change))

    snippet, store = discover(tmp_path / "snippets")[0], Store(tmp_path)
    assert store.standing(snippet, store.targets["cpu"]).state is state


def test_the_key_is_the_same_on_every_python_here():
    # The recorder runs on a GPU machine's Python too (3.12 in the lent image): its key must
    # agree with this one's. Every CPython on PATH computes the key of each snippet and of
    # the tricky source above.
    code = (
        "import sys, pathlib; sys.path.insert(0, sys.argv[1]); from recorded.model.snippets import code_sha256; "
        "print([code_sha256(p.read_bytes()) for p in sorted(pathlib.Path(sys.argv[2]).rglob('*.py'))]"
        " + [code_sha256(sys.argv[3].encode())])"
    )
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = {p for v in ("3.11", "3.12", "3.13", "3.14") if (p := shutil.which(f"python{v}"))}
    found |= {str(p) for p in pyenv.glob("3.1[1-9]*/bin/python3")}  # pyenv's, beside its shims
    runs = lambda python: (
        subprocess.run([python, "-c", "pass"], capture_output=True, check=False).returncode == 0
    )
    pythons = {sys.executable} | {p for p in found if runs(p)}  # a version manager's shim may not run
    keys = {
        python: subprocess.run(
            [python, "-c", code, str(REPO / "src"), str(REPO / "snippets"), KEYED],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for python in pythons
    }
    assert len(set(keys.values())) == 1, keys


def test_every_committed_recording_keys_the_code_it_holds_as_the_recorder_does_now():
    # A change to how the key is computed would quietly make every recording an earlier
    # version's, the GPU's among them: each stored key must still be the key of its stored code.
    checked = 0
    for path in sorted((REPO / "recordings").rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["code"]:
            assert data["code_sha256"] == code_sha256(data["code"].encode()), path
            checked += 1
    assert checked


def as_schema(data: dict, schema: int, source: bytes) -> dict:
    """A recording as an older recorder wrote it, from what this one writes."""
    data = {k: v for k, v in data.items() if k != "code"}
    if schema == 1:
        del data["code_sha256"], data["runs"]
    else:  # 2: the key was the code without comments
        data["code_sha256"] = comment_free_sha256(source)
    return data | {"schema": schema}


@pytest.mark.parametrize("schema", [1, 2])
def test_a_recording_of_an_older_schema_is_read_and_upgraded_in_place(tmp_path, capsys, schema):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    add_snippet(tmp_path, "lesson/02_b.py", HELLO)
    assert main(tmp_path) == 0
    for name in ("01_a", "02_b"):  # as the older recorder wrote them
        path = tmp_path / "recordings" / "cpu" / "lesson" / f"{name}.json"
        source = (tmp_path / "snippets" / "lesson" / f"{name}.py").read_bytes()
        path.write_text(json.dumps(as_schema(json.loads(path.read_text()), schema, source), indent=2) + "\n")
    (tmp_path / "snippets" / "lesson" / "02_b.py").write_text(HELLO + "print('changed')\n")
    if schema == 2:  # schema 2 ignored comments already: one added keeps the recording fresh
        (tmp_path / "snippets" / "lesson" / "01_a.py").write_text(HELLO + "# a comment\n")
    snippets = discover(tmp_path / "snippets")
    before = Store(tmp_path)
    states = [before.standing(s, before.targets["cpu"]).state for s in snippets]
    assert states == [State.FRESH, State.STALE]

    assert main(tmp_path, "--upgrade") == 0

    assert "2 upgraded to schema 3, 0 already current" in capsys.readouterr().out
    store = Store(tmp_path)
    assert [store.standing(s, store.targets["cpu"]).state for s in snippets] == states
    a = json.loads((tmp_path / "recordings" / "cpu" / "lesson" / "01_a.json").read_text())
    b = json.loads((tmp_path / "recordings" / "cpu" / "lesson" / "02_b.json").read_text())
    assert a["schema"] == 3 and a["code_sha256"] == snippets[0].code_sha256()
    assert a["code"] == snippets[0].path.read_text()  # the code it ran, but for comments
    assert (b["code_sha256"], b["code"]) == ("", "")  # an earlier version it does not hold
    (tmp_path / "snippets" / "lesson" / "01_a.py").write_text('"""Now documented."""\n' + HELLO)
    assert store.standing(discover(tmp_path / "snippets")[0], store.targets["cpu"]).state is State.FRESH
    assert main(tmp_path, "--upgrade") == 0
    assert "0 upgraded to schema 3, 2 already current" in capsys.readouterr().out


# -- fresh runs ------------------------------------------------------------------------------

FLIPS = """
import os, pathlib
counter = pathlib.Path(os.environ["COUNTER"])
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
print("pid:", os.getpid())
print("a vs b here:", "slower" if n == 2 else "faster")
print("A/A here: within noise")
"""


def flipping(tmp_path, tmp_path_factory, monkeypatch) -> Path:
    """A timing snippet whose second run gives another verdict: its counter lives outside the
    project, where only an unsandboxed run can write, so the tests that call this ask for one)."""
    monkeypatch.setenv("COUNTER", str(tmp_path_factory.mktemp("counter") / "n"))
    add_snippet(tmp_path, "lesson/01_t.py", FLIPS, timing=True)
    return tmp_path


def test_a_timing_snippet_runs_three_times_each_in_a_fresh_process(
    tmp_path, tmp_path_factory, monkeypatch, unsandboxed
):
    root = flipping(tmp_path, tmp_path_factory, monkeypatch)

    assert main(root, "--keep-busy") == 0  # the suite itself keeps the machine busy

    rec = Store(root).read("lesson/01_t.py", "cpu")
    assert rec is not None and len(rec.outputs) == 3
    pids = {next(line for line in out if line.startswith("pid:")) for out in rec.outputs}
    assert len(pids) == 3  # three processes
    assert [out[1] for out in rec.outputs] == [
        "a vs b here: faster",
        "a vs b here: slower",
        "a vs b here: faster",
    ]
    assert all(run.busy is not None for run in rec.runs)


def test_runs_come_from_the_configuration_or_the_flag(tmp_path, tmp_path_factory, monkeypatch, unsandboxed):
    root = flipping(tmp_path, tmp_path_factory, monkeypatch)
    (root / "pyproject.toml").write_text("[tool.recorded]\nruns = 2\n")

    assert main(root, "--keep-busy") == 0
    assert len(Store(root).read("lesson/01_t.py", "cpu").outputs) == 2  # type: ignore[union-attr]
    assert main(root, "--keep-busy", "--force", "--runs", "1") == 0
    assert len(Store(root).read("lesson/01_t.py", "cpu").outputs) == 1  # type: ignore[union-attr]
    (root / "pyproject.toml").write_text("[tool.recorded]\nruns = 0\n")
    assert main(root) == 2  # refused, naming the key


def test_a_decisive_claim_holds_only_if_every_fresh_run_gave_it(
    tmp_path, tmp_path_factory, monkeypatch, warnings, unsandboxed
):
    from projects import Project

    root = flipping(tmp_path, tmp_path_factory, monkeypatch)
    assert main(root, "--keep-busy") == 0
    project = Project(root)
    project.page("recordings.md", "# Recordings\n\n/// recordings\n///\n")

    html = project.render('# P\n\n/// recorded | lesson/01_t.py\nexpect:\n  - "a vs b here: faster"\n///\n')

    (warning,) = warnings()
    assert "does not print ['a vs b here: faster'] in run 2 of 3" in warning
    # Beside the verdict, as the reader sees it: the count, without saying the verdict twice.
    assert re.search(r"here: faster<span class=\"recorded-runs\">\s+in 2 of 3 runs; slower in 1</span>", html)
    assert re.search(r"here: within noise<span class=\"recorded-runs\">\s+in 3 of 3 runs</span>", html)


def test_check_names_a_recording_left_over_from_a_renamed_snippet(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", HELLO)
    assert main(tmp_path) == 0
    (tmp_path / "snippets" / "lesson" / "01_a.py").rename(tmp_path / "snippets" / "lesson" / "01_b.py")
    assert main(tmp_path) == 0
    capsys.readouterr()

    assert main(tmp_path, "--check") == 1

    out = capsys.readouterr().out
    assert "error recordings/cpu/lesson/01_a.json: a recording of no snippet (renamed or deleted?)" in out
    assert "fix: delete it" in out and ", 1 left over" in out
