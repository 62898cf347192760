"""Targets as data: declared in pyproject.toml, used by everything that knows targets.

Each test builds a throwaway project with its own pyproject.toml. Target checks are
faked (tests/conftest.py, ``fake_machine``) except in the tests that say they run the
real check, which pay for one ``import torch`` each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from projects import Project
from recorded import cli
from recorded.config import targets
from recorded.model import machines
from recorded.model.machines import Machine
from recorded.model.recording import Ending, Recording
from recorded.model.snippets import SnippetError, load
from recorded.model.store import Store
from recorded.recorder import runner
from recorded.recorder.bundles import bundle_json
from rendering import block, output_tabs, page

ROOT = Path(__file__).resolve().parents[2]

#: Written out, not built with projects.target(): the refused-config tests below edit this text.
THREE = """
[tool.recorded]
auto = ["gpu", "cpu"]

[tool.recorded.targets.cpu]
label = "CPU"
provides = ["cpu"]
description = "this CPU as it is"
env = { CUDA_VISIBLE_DEVICES = "" }
required = true

[tool.recorded.targets.cpu-slow]
label = "CPU, slowed"
provides = ["cpu"]
description = "this CPU with a made-up limit"
env = { CUDA_VISIBLE_DEVICES = "", MADE_UP_LIMIT = "1" }
required = true
check = { code = "import os; print(os.environ['MADE_UP_LIMIT'])", prints = "1" }

[tool.recorded.targets.gpu]
label = "GPU"
provides = ["cpu", "cuda"]
description = "a pretend GPU"
device = "cuda"
"""

ENV_REPORT = 'import os\nprint("limit:", os.environ.get("MADE_UP_LIMIT"))\n'


def make(root: Path, config: str = THREE, snippets: dict[str, str] | None = None) -> Path:
    """A project with these targets and snippets (one that reports its made-up limit by default)."""
    project = Project(root)
    project.config(config)
    for name, code in (snippets or {"lesson/01_a.py": ENV_REPORT}).items():
        project.file(f"snippets/{name}", code)
    return root


def tree(root: Path) -> dict[str, bytes]:
    base = root / "recordings"
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


pytestmark = pytest.mark.usefixtures("fake_machine")


# -- the configuration ---------------------------------------------------------------------


def test_targets_come_from_pyproject_in_tab_order(tmp_path):
    known = targets.load(make(tmp_path))

    assert known.names == ("cpu", "cpu-slow", "gpu")
    assert known.auto == ("gpu", "cpu")
    assert known.get("cpu-slow").label == "CPU, slowed"
    assert dict(known.get("cpu-slow").env) == {"CUDA_VISIBLE_DEVICES": "", "MADE_UP_LIMIT": "1"}
    assert known.capabilities == {"cpu", "cuda"}


def test_a_project_without_targets_gets_cpu_and_cuda(tmp_path):
    known = targets.load(tmp_path)

    assert known.names == ("cpu", "cuda") and known.auto == ("cuda", "cpu")
    assert known.get("cpu").required and not known.get("cuda").required


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda c: c.replace('label = "CPU, slowed"\n', ""),
            "[tool.recorded.targets.cpu-slow] lacks 'label', which must be a string",
        ),
        (
            lambda c: c.replace('provides = ["cpu", "cuda"]', 'provides = "cuda"'),
            "[tool.recorded.targets.gpu] provides must be a list of strings, got 'cuda'",
        ),
        (
            lambda c: c.replace("required = true\ncheck", "required = 1\ncheck"),
            "[tool.recorded.targets.cpu-slow] required must be true or false, got 1",
        ),
        (
            lambda c: c.replace('prints = "1" }', 'expect = "1" }'),
            "[tool.recorded.targets.cpu-slow.check] has unknown key(s) ['expect']; the keys are ['code', 'prints']",
        ),
        (
            lambda c: c.replace('description = "a pretend GPU"', 'descripton = "a pretend GPU"'),
            "[tool.recorded.targets.gpu] has unknown key(s) ['descripton']; the keys are",
        ),
        (
            lambda c: c.replace("targets.cpu-slow]", "targets.Cpu_Slow]"),
            "target name 'Cpu_Slow': use lower-case letters, digits and dashes",
        ),
        (
            lambda c: c.replace('auto = ["gpu", "cpu"]', 'auto = ["tpu", "cpu"]'),
            "auto names unknown target(s) ['tpu']; the targets are ['cpu', 'cpu-slow', 'gpu']",
        ),
        (
            lambda c: c.replace("[tool.recorded]\n", "[tool.recorded\n"),
            "pyproject.toml: not valid TOML",
        ),
    ],
    ids=[
        "missing-key",
        "mistyped-list",
        "mistyped-bool",
        "bad-check",
        "unknown-key",
        "bad-name",
        "unknown-auto",
        "bad-toml",
    ],
)
def test_a_bad_config_entry_is_refused_naming_the_file_the_target_and_the_key(
    tmp_path, capsys, runs, change, message
):
    make(tmp_path)
    assert cli.main([], root=tmp_path) == 0
    before = tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text(change(textwrap.dedent(THREE)), encoding="utf-8")
    runs.clear()

    with pytest.raises(targets.TargetError) as raised:
        targets.load(tmp_path)
    assert cli.main(["--force"], root=tmp_path) == 2

    assert message in str(raised.value) and str(raised.value).startswith("pyproject.toml")
    err = capsys.readouterr().err
    assert message in err and "Nothing was run or written" in err
    assert runs == [] and tree(tmp_path) == before


# -- recording -----------------------------------------------------------------------------


def test_default_records_every_target_this_machine_can_run_each_in_its_own_environment(
    tmp_path, runs, capsys
):
    make(tmp_path)

    assert cli.main([], root=tmp_path) == 0

    assert runs == [("lesson/01_a.py", "cpu"), ("lesson/01_a.py", "cpu-slow")]
    store = Store(tmp_path)
    fast = store.read("lesson/01_a.py", "cpu")
    assert fast is not None and fast.stdout == ["limit: None"]
    slow = store.read("lesson/01_a.py", "cpu-slow")
    assert slow is not None
    assert slow.stdout == ["limit: 1"]
    assert slow.machine["target"] == {
        "name": "cpu-slow",
        "description": "this CPU with a made-up limit",
        "env": {"CUDA_VISIBLE_DEVICES": "", "MADE_UP_LIMIT": "1"},
        "check": "1",
    }
    assert "skipped gpu: this machine cannot run it" in capsys.readouterr().err


def test_target_auto_takes_the_first_auto_target_this_machine_can_run(tmp_path, runs, fake_machine):
    make(tmp_path)
    assert cli.main(["--target", "auto"], root=tmp_path) == 0
    assert runs == [("lesson/01_a.py", "cpu")]

    fake_machine.gpu = True
    runs.clear()
    assert cli.main(["--target", "auto"], root=tmp_path) == 0
    assert runs == [("lesson/01_a.py", "gpu")]


def test_an_unknown_target_on_the_command_line_exits_2_naming_the_known_ones(tmp_path, runs, capsys):
    make(tmp_path)

    for argv in (["--target", "tpu"], ["--target", "tpu", "--check"], ["--target", "tpu", "--compare"]):
        assert cli.main(argv, root=tmp_path) == 2
        err = capsys.readouterr().err
        assert "--target: unknown target 'tpu'; the targets are ['cpu', 'cpu-slow', 'gpu']" in err
    assert runs == [] and not (tmp_path / "recordings").exists()


def test_a_target_whose_check_fails_records_nothing_and_keeps_what_was_recorded(
    tmp_path, runs, capsys, fake_machine
):
    make(tmp_path)
    assert cli.main([], root=tmp_path) == 0
    (tmp_path / "snippets" / "lesson" / "01_a.py").write_text(ENV_REPORT + "print('edited')\n")
    before = tree(tmp_path)
    fake_machine.failing["cpu-slow"] = "its check printed '0', not '1'"
    runs.clear()

    assert cli.main(["--target", "cpu-slow"], root=tmp_path) == 2

    err = capsys.readouterr().err
    assert "--target cpu-slow: its check printed '0', not '1'. Nothing was recorded." in err
    assert "this CPU with a made-up limit" in err and "choose another target: cpu, gpu" in err
    assert runs == [] and tree(tmp_path) == before

    assert cli.main([], root=tmp_path) == 0  # every target: the others still record
    assert runs == [("lesson/01_a.py", "cpu")]
    assert (
        "skipped cpu-slow: this machine cannot run it (its check printed '0', not '1')"
        in capsys.readouterr().err
    )
    assert tree(tmp_path)["cpu-slow/lesson/01_a.json"] == before["cpu-slow/lesson/01_a.json"]


def test_the_real_check_runs_in_the_targets_environment(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "check", REAL_CHECK)
    known = targets.load(make(tmp_path))

    assert runner.check(known.get("cpu-slow")) == "1"
    wrong = targets.Target(
        "cpu-slow", "x", frozenset({"cpu"}), "x", (), True, (), targets.Check("print('AVX512')", "AVX2")
    )
    with pytest.raises(runner.TargetCheckFailed, match="its check printed 'AVX512', not 'AVX2'"):
        runner.check(wrong)


REAL_CHECK = runner.check


def _printed(code: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return (done.stdout.strip().splitlines() or [done.stderr.strip()[-200:]])[-1]


def test_the_emulated_avx2_limits_are_proven_in_the_run_and_the_host_prints_otherwise():
    """The real cpu-amx-as-avx2 check, with torch: limited, ATen and oneDNN say AVX2 here on
    any x86 CPU with AVX-512; MKL names its instruction set only on an Intel CPU, so the whole
    line (MKL too) is asserted on a machine that is cpu-amx. Unlimited (the host's own
    environment), the check prints something else, so it cannot pass there."""
    known = targets.load(ROOT)
    emulated, host = known.get("cpu-amx-as-avx2"), known.get("cpu-amx")
    assert emulated.check is not None
    native = _printed("import torch; print(torch.backends.cpu.get_cpu_capability())", dict(host.env))
    if native in ("AVX2", "DEFAULT"):
        pytest.skip(f"this CPU's own capability is {native}, so an unlimited run also looks limited")

    limited = _printed(emulated.check.code, dict(emulated.env))
    unlimited = _printed(emulated.check.code, dict(host.env))

    assert limited.startswith("ATen AVX2, oneDNN bf16 False, MKL "), limited
    assert unlimited != emulated.check.prints and unlimited.startswith(f"ATen {native}, "), unlimited
    if "cpu-amx" in machines.targets_here(known):
        assert limited == emulated.check.prints
        assert unlimited.endswith("MKL AVX-512"), unlimited


EMULATED = THREE.replace(
    """required = true
check = {""",
    """required = true
emulated = true
host = "cpu"
check = {""",
)


def test_an_emulated_targets_check_must_print_something_else_in_its_hosts_environment(tmp_path, monkeypatch):
    """Run for real (plain Python, no torch): a check that prints the same with and without
    the limits, like get_cpu_capability() on a CPU whose best is the limit, proves nothing."""
    monkeypatch.setattr(runner, "check", REAL_CHECK)
    known = targets.load(make(tmp_path, EMULATED))
    assert runner.check(known.get("cpu-slow")) == "1"  # its host has no MADE_UP_LIMIT: it fails there

    blind = targets.load(make(tmp_path, EMULATED.replace("print(os.environ['MADE_UP_LIMIT'])", "print(1)")))
    with pytest.raises(runner.TargetCheckFailed) as raised:
        runner.check(blind.get("cpu-slow"))
    assert (
        "its check prints '1' in its host cpu's environment too ({'CUDA_VISIBLE_DEVICES': ''}), "
        "so it cannot tell cpu-slow from cpu"
    ) in str(raised.value)


def test_the_recorder_refuses_an_emulated_target_whose_check_cannot_tell_it_from_its_host(
    tmp_path, runs, capsys, monkeypatch
):
    monkeypatch.setattr(runner, "check", REAL_CHECK)
    make(tmp_path, EMULATED.replace("print(os.environ['MADE_UP_LIMIT'])", "print(1)"))

    assert cli.main(["--target", "cpu-slow"], root=tmp_path) == 2

    assert "cannot tell cpu-slow from cpu" in capsys.readouterr().err
    assert runs == [] and not (tmp_path / "recordings").exists()


@pytest.mark.parametrize(
    "device, message",
    [
        ('"tpu"', "[tool.recorded.targets.gpu] device 'tpu' is not a known device (known: ['cuda'])"),
        (
            '{ name = "a TPU", available = "True" }',
            "[tool.recorded.targets.gpu.device] lacks 'probe', which must be Python that prints one JSON object",
        ),
        (
            '{ name = "a TPU", probe = "print(1)", available = "x = 1" }',
            "[tool.recorded.targets.gpu.device] available must be Python whose last line is an expression",
        ),
        ("3", "[tool.recorded.targets.gpu] device must be the key of a known device or a table"),
        (
            '"cuda"\nrequires = { gpu = true }',
            (
                "[tool.recorded.targets.gpu] requires.gpu is no longer a key: "
                "a target with a device declares it, device = <the key of a known"
            ),
        ),
    ],
)
def test_a_badly_declared_device_is_refused_naming_the_key(tmp_path, device, message):
    make(tmp_path, THREE.replace('device = "cuda"', f"device = {device}"))

    with pytest.raises(targets.TargetError) as raised:
        targets.load(tmp_path)

    assert str(raised.value).startswith("pyproject.toml: ") and message in str(raised.value), raised.value


# -- snippets, pages, bundles, listings ----------------------------------------------------


def test_a_snippet_requiring_what_no_target_provides_names_the_known_ones(tmp_path):
    make(
        tmp_path,
        snippets={
            "lesson/01_mps.py": '# /// script\n# [tool.recorded]\n# requires = ["mps"]\n# ///\nprint(1)\n'
        },
    )

    with pytest.raises(SnippetError) as raised:
        load(tmp_path / "snippets", "lesson/01_mps.py")

    assert "lesson/01_mps.py: [tool.recorded] requires must be a list drawn from ['cpu', 'cuda']" in str(
        raised.value
    )
    assert "the targets ['cpu', 'cpu-slow', 'gpu']" in str(raised.value)


def test_a_misplaced_record_runs_key_is_shown_with_a_requirement_this_project_has(tmp_path):
    config = THREE.replace('provides = ["cpu", "cuda"]', 'provides = ["cpu", "made-up-npu"]')
    make(tmp_path, config, snippets={"lesson/01_a.py": "# /// script\n# [tool]\n# recorded = 5\n# ///\n"})

    with pytest.raises(SnippetError) as raised:
        load(tmp_path / "snippets", "lesson/01_a.py")

    assert "such as '# requires = [\"made-up-npu\"]'" in str(raised.value)


def test_pages_show_one_tab_per_target_with_the_configured_labels_and_descriptions(tmp_path, warnings):
    make(tmp_path)
    project = Project(tmp_path)
    snippet = load(tmp_path / "snippets", "lesson/01_a.py")
    project.recording(snippet, "cpu", ["limit: None"])
    project.recording(snippet, "cpu-slow", ["limit: 1"])

    html = project.render(page(block("lesson/01_a.py", 'expect_on:\n  cpu-slow:\n    - "limit: 1"\n')))

    (tabs,) = output_tabs(html)
    assert list(tabs) == ["CPU", "CPU, slowed"]  # the kinds that recorded it, in the configured order
    assert '<p class="recorded-provenance">Test CPU 9000 (AVX2), 4 cores · ' in tabs["CPU, slowed"]
    assert "GPU" not in html  # recorded nowhere: left to the recordings page
    assert warnings() == []


def test_a_required_target_without_a_recording_warns_in_every_build(tmp_path, warnings):
    make(tmp_path)
    project = Project(tmp_path)
    project.recording(load(tmp_path / "snippets", "lesson/01_a.py"), "cpu", ["limit: None"])

    project.render(page(block("lesson/01_a.py")))

    (warning,) = warnings()
    assert "lesson/01_a.py has no CPU, slowed recording" in warning and "--target cpu-slow" in warning


def test_an_unknown_target_in_a_block_names_page_line_and_the_known_targets(tmp_path, warnings):
    make(tmp_path)
    project = Project(tmp_path)

    project.render(page(block("lesson/01_a.py", 'expect_on:\n  cpu-avx2:\n    - "limit: 1"\n')))

    (warning,) = warnings()
    assert ":3: recorded block: expect_on names unknown target(s) ['cpu-avx2']" in warning
    assert "the targets are ['cpu', 'cpu-slow', 'gpu']" in warning


def _bundle(tmp_path: Path, target: str, check: str | None) -> Path:
    snippet = load(tmp_path / "snippets", "lesson/01_a.py")
    rec = Recording(
        snippet.name,
        target,
        snippet.sha256(),
        Ending.OK,
        0,
        ["limit: 1"],
        [],
        0.1,
        "2026-12-02T00:00:00Z",
        Machine({"cpu": {"model": "x"}, "target": {"name": target, "check": check}}),
    )
    path = tmp_path / "b.json"
    path.write_text(bundle_json([rec]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "target, check, why",
    [
        ("tpu", None, "unknown target 'tpu'; the targets are ['cpu', 'cpu-slow', 'gpu']"),
        (
            "cpu-slow",
            "0",
            "it does not prove cpu-slow (its check printed '0', cpu-slow needs '1')",
        ),
        ("cpu-slow", None, "its check printed None"),
    ],
)
def test_a_bundle_for_an_unknown_or_unproven_target_is_refused_and_nothing_written(
    tmp_path, capsys, target, check, why
):
    make(tmp_path)

    assert cli.main(["--import", str(_bundle(tmp_path, target, check))], root=tmp_path) == 1

    assert why in capsys.readouterr().out
    assert not (tmp_path / "recordings").exists()


def test_a_bundle_for_a_proven_target_is_imported(tmp_path, capsys):
    make(tmp_path)

    assert cli.main(["--import", str(_bundle(tmp_path, "cpu-slow", "1"))], root=tmp_path) == 0

    rec = Store(tmp_path).read("lesson/01_a.py", "cpu-slow")
    assert rec is not None and rec.stdout == ["limit: 1"]


def test_list_and_check_cover_every_target_and_required_ones_fail_the_check(tmp_path, capsys):
    make(tmp_path)
    assert cli.main(["--target", "cpu"], root=tmp_path) == 0
    capsys.readouterr()

    assert cli.main(["--list"], root=tmp_path) == 0
    listed = capsys.readouterr().out
    assert cli.main(["--check"], root=tmp_path) == 1
    checked = capsys.readouterr().out

    for target in ("cpu ", "cpu-slow ", "gpu "):
        assert f"lesson/01_a.py  {target}" in listed
    assert "error lesson/01_a.py on cpu-slow: missing" in checked
    assert "note  lesson/01_a.py on gpu: missing" in checked
    assert "1 fresh, 2 to record (1 required)" in checked


def test_shards_split_each_target_and_cover_every_snippet_once(tmp_path, runs):
    make(tmp_path, snippets={f"lesson/0{i}_s.py": f"print({i})\n" for i in range(1, 5)})

    for shard in ("1/2", "2/2"):
        assert cli.main(["--shard", shard], root=tmp_path) == 0

    for target in ("cpu", "cpu-slow"):
        assert sorted(name for name, t in runs if t == target) == [f"lesson/0{i}_s.py" for i in range(1, 5)]
    assert len(runs) == 8


def test_compare_has_a_published_column_per_target(tmp_path, capsys):
    make(tmp_path, snippets={"lesson/01_v.py": 'print("fast here: True")\n'})
    assert cli.main([], root=tmp_path) == 0
    capsys.readouterr()

    assert cli.main(["--compare"], root=tmp_path) == 0

    out = capsys.readouterr().out
    rows = [" ".join(line.split()) for line in out.splitlines()]
    assert "here CPU CPU, slowed" in rows  # a column for each target that recorded something
    assert "GPU" not in out  # nothing recorded there: no column
    assert (
        "Summary: 1 of the 1 verdicts this machine printed agree with every published tab that printed them."
        in " ".join(rows)
    )


def test_the_recordings_page_lists_every_target(tmp_path):
    make(tmp_path)
    assert cli.main([], root=tmp_path) == 0
    (tmp_path / "docs").mkdir()
    project = Project(tmp_path)

    html = project.render("# Recordings\n\n/// recordings\n///\n")

    assert "1 snippets on 3 targets: 2 fresh, 1 missing." in html
    for label in ("CPU", "CPU, slowed", "GPU"):
        assert f'<td data-column="target">{label}</td>' in html


def test_several_targets_named_at_once_record_in_one_run_and_one_bundle(tmp_path, runs):
    make(tmp_path)
    bundle = tmp_path / "cpu-runner.json"

    assert cli.main(["--target", "cpu,cpu-slow", "--bundle", str(bundle)], root=tmp_path) == 0

    assert runs == [("lesson/01_a.py", "cpu"), ("lesson/01_a.py", "cpu-slow")]
    assert [r["target"] for r in json.loads(bundle.read_text())["recordings"]] == ["cpu", "cpu-slow"]


def test_every_target_setting_says_what_it_is_for():
    """The schema is where a setting is described, once: the contributors' guide shows it."""
    from recorded.pages.tables import settings_rows

    undescribed = [name for name, key in settings_rows(targets.SCHEMA) if not key.means.strip()]
    assert not undescribed, f"say what these target settings are for (Key.means in config/): {undescribed}"


def test_every_reader_of_pyproject_refuses_broken_toml_in_the_same_words(tmp_path):
    from recorded.config import lessons, schema, settings

    (tmp_path / "pyproject.toml").write_text("[tool.recorded\n", encoding="utf-8")
    said = set()
    for reader, kind in (
        (targets.load, targets.TargetError),
        (lessons.load, lessons.LessonError),
        (settings.load, schema.ConfigError),
    ):
        with pytest.raises(kind) as refused:
            reader(tmp_path)
        said.add(str(refused.value))
    (message,) = said
    assert message.startswith("pyproject.toml: not valid TOML (")
