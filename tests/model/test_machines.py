"""Kinds of machine: every target names the hardware it is, every recording proves it from
what it stores, and one tab shows one machine.

Most tests build a throwaway project with three kinds (a CPU with AMX, that machine with an
emulated limit, a CPU with AVX2 only) and pretend to be a machine by its CPU flags
(``machine_is``); the first two check the repository's own recordings.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from fakes import FAKE_MACHINE, fake_cpu
from projects import Project, add_snippet
from recorded import cli
from recorded.config import targets
from recorded.config.targets import Target
from recorded.model import machines
from recorded.model.machines import Machine
from recorded.model.recording import Ending, Recording
from recorded.model.store import Store
from recorded.recorder import admit
from recorded.recorder.bundles import bundle_json
from recorded.recorder.choose import ChoiceError, choose

ROOT = Path(__file__).resolve().parents[2]

#: Written out, not built with projects.target(): the refused-config tests below edit this text.
KINDS = """
[tool.recorded]
auto = ["amx", "small"]

[tool.recorded.targets.amx]
label = "CPU with AMX"
provides = ["cpu"]
description = "a CPU with AMX"
env = { CUDA_VISIBLE_DEVICES = "" }
requires = { flags = ["amx_bf16"] }
runs-on = ["self-hosted", "amx"]

[tool.recorded.targets.amx-limited]
label = "Same CPU, limited (emulated)"
provides = ["cpu"]
description = "the CPU with AMX with a made-up limit"
env = { CUDA_VISIBLE_DEVICES = "", MADE_UP_LIMIT = "1" }
emulated = true
host = "amx"
check = { code = "import os; print(os.environ['MADE_UP_LIMIT'])", prints = "1" }

[tool.recorded.targets.small]
label = "CPU with AVX2 only"
provides = ["cpu"]
description = "a CPU with AVX2 and no AVX-512"
env = { CUDA_VISIBLE_DEVICES = "" }
requires = { flags = ["avx2"], absent = ["avx512f"] }
runs-on = "ubuntu-latest"
"""
XEON = ["avx2", "avx512f", "avx512_bf16", "amx_bf16"]
EPYC = ["avx2", "avx512f", "avx512_bf16"]
AVX2 = ["avx2"]

pytestmark = pytest.mark.usefixtures("fake_machine")


def names(chosen: tuple[Target, ...]) -> tuple[str, ...]:
    return tuple(t.name for t in chosen)


def make(root: Path, config: str = KINDS) -> Path:
    """A project with these targets and two snippets that print their own names."""
    project = Project(root)
    project.config(config)
    for name in ("lesson/01_a.py", "lesson/02_b.py"):
        add_snippet(root, name, f'print("{name}")\n')
    return root


@pytest.fixture
def machine_is(monkeypatch):
    """Pretend this machine has these CPU flags (and this model), for the live look at
    /proc/cpuinfo and for the machine block a recording stores."""

    def pretend(flags, model="Test CPU"):
        monkeypatch.setattr(machines, "this_cpu", lambda extra=(): fake_cpu(flags, model))
        monkeypatch.setitem(FAKE_MACHINE, "cpu", fake_cpu(flags, model))

    return pretend


def tree(root: Path) -> dict[str, bytes]:
    base = root / "recordings"
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*.json"))}


def stored_machine(root: Path, path: str) -> dict:
    return json.loads((root / "recordings" / path).read_text())["machine"]


# -- the repository's own recordings -------------------------------------------------------


def test_every_committed_recording_proves_its_target_and_each_tab_is_one_machine():
    """Fails naming the file, the target and the values, or the tab and both machines."""
    problems = admit.audit(Store(ROOT))
    assert problems == [], "\n".join(problems)


def test_every_folder_under_recordings_is_a_declared_target():
    known = targets.load(ROOT)
    folders = sorted(p.name for p in (ROOT / "recordings").iterdir() if p.is_dir())
    strays = [f for f in folders if f not in known]
    assert strays == [], (
        f"recordings/{strays[0]}/ is no target {list(known.names)}: move what fits with "
        f"record_runs.py --adopt {strays[0]} TARGET, and git rm the rest"
    )


def test_the_repository_declares_kinds_of_machine_one_machine_each():
    """Whatever targets pyproject.toml declares: each native one is a kind of machine its
    recordings can prove (CPU flags or a device), no two native kinds are the same
    requirement, and an emulated one shares its native host's machine and limits every
    library the lesson's timings go through (one limited library alone proves nothing)."""
    known = targets.load(ROOT)
    native = [t for t in known if not t.emulated]

    for t in native:
        assert t.requires.flags or t.requires.absent or t.requires.device, (
            f"{t.name}: requires no CPU flag and no device, so a recording cannot prove it is that kind"
        )
    same = [
        (a.name, b.name) for i, a in enumerate(native) for b in native[i + 1 :] if a.requires == b.requires
    ]
    assert same == [], f"targets that are the same kind of machine: {same}"
    for t in known:
        if not t.emulated:
            continue
        host = known.get(t.host)
        assert not host.emulated and t.requires == host.requires, t.name
        assert known.sharing(host)[0] == host and t in known.sharing(host)
        limits = {k: v for k, v in t.env if dict(host.env).get(k) != v}
        isa = {"ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS"}
        if limits.keys() & isa:
            assert isa <= limits.keys(), f"{t.name} limits {sorted(limits.keys() & isa)} but not all of {isa}"
        assert t.check is not None, f"{t.name}: an emulated target needs a check that proves its limits"


# -- the configuration: bad input is refused, naming file, target and values ---------------


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda c: c.replace('flags = ["amx_bf16"]', 'flags = ["amx_bf61"]'),
            (
                "[tool.recorded.targets.amx] requires.flags: unknown CPU flag(s) 'amx_bf61' "
                "(did you mean 'amx_bf16'?)"
            ),
        ),
        (
            lambda c: c.replace('absent = ["avx512f"]', 'absent = ["avx512"]'),
            "[tool.recorded.targets.small] requires.absent: unknown CPU flag(s) 'avx512'",
        ),
        (
            lambda c: c.replace('absent = ["avx512f"]', 'absent = ["avx2"]'),
            "[tool.recorded.targets.small] requires: ['avx2'] both present (flags) and absent",
        ),
        (
            lambda c: c.replace('host = "amx"\n', ""),
            "[tool.recorded.targets.amx-limited] is emulated but names no host",
        ),
        (
            lambda c: c.replace('host = "amx"', 'host = "amd"'),
            "[tool.recorded.targets.amx-limited] host 'amd' is not a target; the targets are",
        ),
        (
            lambda c: c.replace('host = "amx"', 'host = "amx"\nrequires = { flags = ["avx512_bf16"] }'),
            (
                "host 'amx' requires amx_bf16 present and provides ['cpu'], but amx-limited claims to require "
                "avx512_bf16 present"
            ),
        ),
        (
            lambda c: c.replace("emulated = true\n", ""),
            "[tool.recorded.targets.amx-limited] names host 'amx' but is not emulated",
        ),
        (
            lambda c: "\n".join(line for line in c.splitlines() if not line.startswith("check =")),
            "[tool.recorded.targets.amx-limited] is emulated and has no check",
        ),
        (
            lambda c: c.replace('runs-on = "ubuntu-latest"', "runs-on = 3"),
            "[tool.recorded.targets.small] runs-on must be a runner label or a list of them, got 3",
        ),
    ],
    ids=[
        "typo-flag",
        "unknown-absent-flag",
        "present-and-absent",
        "emulated-without-host",
        "unknown-host",
        "host-is-other-hardware",
        "host-without-emulated",
        "emulated-without-check",
        "bad-runs-on",
    ],
)
def test_a_bad_requirement_or_host_is_refused_and_nothing_runs(tmp_path, capsys, runs, change, message):
    make(tmp_path)
    (tmp_path / "pyproject.toml").write_text(change(textwrap.dedent(KINDS)), encoding="utf-8")

    with pytest.raises(targets.TargetError) as raised:
        targets.load(tmp_path)
    assert cli.main(["--force"], root=tmp_path) == 2

    assert message in str(raised.value) and str(raised.value).startswith("pyproject.toml")
    assert message in capsys.readouterr().err
    assert runs == [] and not (tmp_path / "recordings").exists()


#: The instruction-set flags a target may require, so a new one must not be refused as a typo. A
#: new mitigation or paging flag (flush_l1d, la57) is no reason for make test to fail on a new CPU.
ISA_FLAG = re.compile(r"(avx|amx|sse|ssse|fma|f16c|bmi|sha|aes|vaes|gfni|vpclmul|sve|sme|asimd|bf16|i8mm|fp)")


def test_the_known_flags_cover_this_machines_instruction_sets():
    from recorded.config import cpu_flags

    here: set[str] = set()
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            here |= set(value.split())
            break
    assert sorted(f for f in here - cpu_flags.KNOWN if ISA_FLAG.match(f)) == []
    # The families above include every flag this project's targets name.
    named = {f for t in targets.load(ROOT) for f in (*t.requires.flags, *t.requires.absent)}
    assert named and all(ISA_FLAG.match(f) for f in named), named


# -- recording: only on the kind of machine a target is ------------------------------------


def test_a_plain_run_records_every_kind_this_machine_is_and_says_why_not_the_others(
    tmp_path, runs, capsys, machine_is
):
    make(tmp_path)
    machine_is(XEON)

    assert cli.main([], root=tmp_path) == 0

    assert sorted({t for _, t in runs}) == ["amx", "amx-limited"]
    err = capsys.readouterr().err
    assert (
        "skipped small: this machine cannot run it (this machine is not a small machine (CPU flag "
        "avx512f present; small requires avx2 present, avx512f absent); this machine can record "
        "amx, amx-limited)" in err
    )
    stored = stored_machine(tmp_path, "amx-limited/lesson/01_a.json")
    assert "amx_bf16" in stored["cpu"]["features"] and "avx512f" in stored["cpu"]["looked_for"]


def test_a_machine_that_is_not_the_kind_cannot_record_it_by_name(tmp_path, runs, capsys, machine_is):
    make(tmp_path)
    machine_is(EPYC)

    assert cli.main(["--target", "amx-limited"], root=tmp_path) == 2

    err = capsys.readouterr().err
    assert (
        "--target amx-limited: this machine is not a amx-limited machine (CPU flag amx_bf16 missing; "
        "amx-limited requires amx_bf16 present); this machine can record none of the targets" in err
    )
    assert runs == [] and not (tmp_path / "recordings").exists()


def test_list_and_check_say_which_kinds_this_machine_is(tmp_path, capsys, machine_is):
    make(tmp_path)
    machine_is(AVX2)

    cli.main(["--list"], root=tmp_path)
    listed = capsys.readouterr().err
    cli.main(["--check"], root=tmp_path)
    checked = capsys.readouterr().err

    for said in (listed, checked):
        assert (
            "this machine is: small; not: amx (CPU flag amx_bf16 missing), amx-limited (CPU flag "
            "amx_bf16 missing)" in said
        )


def test_the_provenance_stores_every_flag_a_requirement_names(tmp_path):
    make(tmp_path, KINDS.replace('flags = ["avx2"]', 'flags = ["avx2", "sse4_2"]'))
    cpu = machines.this_cpu(targets.load(tmp_path).flags)

    assert {"sse4_2", "avx512f", "amx_bf16", "avx2"} <= set(cpu["looked_for"])
    assert set(cpu["features"]) <= set(cpu["looked_for"])


# -- choosing targets: one chooser for the command line and the tests' live runs -----------


def test_named_targets_are_chosen_each_once_and_a_kind_this_machine_is_not_is_skipped_with_why(
    tmp_path, machine_is
):
    known = targets.load(make(tmp_path))
    machine_is(XEON)
    assert names(choose(known, "amx, amx-limited,amx").chosen) == ("amx", "amx-limited")

    machine_is(EPYC)
    choice = choose(known, "amx")
    assert choice.named and choice.chosen == ()
    assert [(target.name, why) for target, why in choice.skipped] == [
        (
            "amx",
            (
                "this machine is not a amx machine (CPU flag amx_bf16 missing; amx "
                "requires amx_bf16 present); this machine can record none of the targets"
            ),
        ),
    ]


def test_an_unknown_target_name_is_refused_naming_the_known_ones(tmp_path):
    known = targets.load(make(tmp_path))

    with pytest.raises(ChoiceError) as raised:
        choose(known, "amx,tpu")
    assert "--target: unknown target 'tpu'; the targets are ['amx', 'amx-limited', 'small']" in str(
        raised.value
    )
    assert "Or use --target all or --target auto." in str(raised.value)


def test_all_chooses_every_target_this_machine_can_run_and_says_why_not_the_others(
    tmp_path, machine_is, fake_machine
):
    known = targets.load(make(tmp_path))
    machine_is(XEON)
    fake_machine.failing["amx-limited"] = "its check printed '0', not '1'"

    choice = choose(known)  # all is the default

    assert not choice.named and names(choice.chosen) == ("amx",)
    assert [target.name for target, _ in choice.skipped] == ["amx-limited", "small"]
    assert choice.skipped[0][1] == "its check printed '0', not '1'"
    assert "small requires avx2 present, avx512f absent" in choice.skipped[1][1]


def test_a_target_nothing_will_run_on_is_not_probed(tmp_path, machine_is, fake_machine):
    known = targets.load(make(tmp_path))
    machine_is(AVX2)

    assert names(choose(known, needed=lambda target: False).chosen) == ("amx", "amx-limited", "small")
    assert names(choose(known, "amx", needed=lambda target: False).chosen) == ("amx",)
    assert fake_machine.calls == []  # no check started, so no Python and no torch


def test_auto_chooses_the_first_auto_target_this_machine_can_run(tmp_path, machine_is, fake_machine):
    known = targets.load(make(tmp_path))  # auto = ["amx", "small"]
    machine_is(XEON)
    assert names(choose(known, "auto").chosen) == ("amx",)

    machine_is(AVX2)
    choice = choose(known, "auto")
    assert names(choice.chosen) == ("small",) and [target.name for target, _ in choice.skipped] == ["amx"]
    assert choice.why().startswith("amx: this machine is not a amx machine")


def test_auto_with_no_target_possible_here_is_refused_naming_each_reason(tmp_path, machine_is):
    known = targets.load(make(tmp_path))
    machine_is(EPYC)  # AVX-512 without AMX: neither amx nor small

    for needed in (lambda name: True, lambda name: False):
        with pytest.raises(ChoiceError) as raised:
            choose(known, "auto", needed=needed)
        message = str(raised.value)
        assert message.startswith("--target auto: none of the auto targets ['amx', 'small']")
        assert "amx: this machine is not a amx machine" in message and "small: " in message
        assert message.endswith("name one with --target.")


def test_the_live_runs_take_the_target_the_recorder_chooses(tmp_path, machine_is):
    from recorded.checks.sybil import LiveRuns

    known = targets.load(make(tmp_path))
    for flags, expected in ((XEON, "amx"), (AVX2, "small")):
        machine_is(flags)
        live = LiveRuns()
        live.targets = known
        assert live.target.name == expected == choose(known, "auto").chosen[0].name

    machine_is(EPYC)
    live = LiveRuns()
    live.targets = known
    with pytest.raises(ChoiceError, match=r"^the tests' live runs: none of the auto targets"):
        _ = live.target


# -- one tab, one machine ------------------------------------------------------------------


def test_a_recording_from_another_machine_is_refused_naming_both(tmp_path, runs, capsys, machine_is):
    make(tmp_path)
    machine_is(XEON, "Xeon A")
    assert cli.main(["--target", "amx"], root=tmp_path) == 0
    (tmp_path / "snippets" / "lesson" / "02_b.py").write_text('print("changed")\n')
    before = tree(tmp_path)
    machine_is(XEON, "Xeon B")
    runs.clear()

    # The emulated target shares its host's machine: refused too.
    for target in ("amx", "amx-limited"):
        assert cli.main(["--target", target], root=tmp_path) == 2
        err = capsys.readouterr().err
        assert "come from Xeon A (2 cores" in err and "this is Xeon B (2 cores" in err
        assert "cpu: 'Xeon A' != 'Xeon B'" in err and f"--target {target} --replace-machine" in err
    assert runs == [] and tree(tmp_path) == before


def test_replace_machine_rerecords_the_whole_tab_and_replaces_only_when_all_succeed(
    tmp_path, runs, capsys, machine_is
):
    make(tmp_path)
    machine_is(XEON, "Xeon A")
    assert cli.main(["--target", "amx"], root=tmp_path) == 0
    machine_is(XEON, "Xeon B")
    broken = tmp_path / "snippets" / "lesson" / "02_b.py"
    broken.write_text("raise SystemExit(3)\n")
    before = tree(tmp_path)

    assert cli.main(["--target", "amx", "--replace-machine"], root=tmp_path) == 2
    assert "nothing was replaced" in capsys.readouterr().err and tree(tmp_path) == before

    broken.write_text('print("fixed")\n')
    runs.clear()
    assert cli.main(["--target", "amx", "--replace-machine"], root=tmp_path) == 0

    # The plan and the summary count the whole tab, its emulation included, not only what was stale.
    err = capsys.readouterr().err
    assert "to record: 4 snippets on amx, amx-limited" in err
    assert "recorded 4 of 4 on amx, amx-limited" in err
    assert sorted(runs) == sorted(
        (s, t) for s in ("lesson/01_a.py", "lesson/02_b.py") for t in ("amx", "amx-limited")
    )
    assert {stored_machine(tmp_path, p)["cpu"]["model"] for p in tree(tmp_path)} == {"Xeon B"}
    assert admit.audit(Store(tmp_path)) == []


def recorded_on_xeon(root: Path, machine_is) -> tuple[Store, Recording]:
    """The project with its amx tab recorded on Xeon A, and that tab's recording of 01_a.py."""
    make(root)
    machine_is(XEON, "Xeon A")
    assert cli.main(["--target", "amx"], root=root) == 0
    store = Store(root)
    rec = store.read("lesson/01_a.py", "amx")
    assert rec is not None
    return store, rec


def test_audit_names_a_recording_that_is_not_its_kind_and_a_tab_from_two_machines(tmp_path, machine_is):
    store, moved = recorded_on_xeon(tmp_path, machine_is)
    moved.target = "small"
    store.write(moved)  # as if someone had copied it by hand
    other = store.read("lesson/02_b.py", "amx")
    assert other is not None
    other.machine = Machine(other.machine, cpu=fake_cpu(XEON, "Xeon B"))
    store.write(other)

    problems = admit.audit(store)

    assert (
        "recordings/small/lesson/01_a.json: it does not prove small (CPU flag avx512f "
        "present; small requires avx2 present, avx512f absent)"
    ) in problems
    assert any(
        p.startswith("amx, amx-limited recorded on two machines: recordings/amx/lesson/01_a.json on Xeon A")
        and "recordings/amx/lesson/02_b.json on Xeon B" in p
        for p in problems
    )
    assert cli.main(["--check"], root=tmp_path) == 1


def test_adopt_moves_only_recordings_whose_machine_is_the_kind_and_the_tabs_machine(
    tmp_path, capsys, machine_is
):
    make(tmp_path)
    store = Store(tmp_path)
    for name, flags, model in (("lesson/01_a.py", XEON, "Xeon"), ("lesson/02_b.py", EPYC, "EPYC")):
        rec = Recording(
            name,
            "amx",
            "0" * 64,
            Ending.OK,
            0,
            ["x"],
            [],
            0.1,
            "2026-12-01T00:00:00Z",
            Machine(FAKE_MACHINE, cpu=fake_cpu(flags, model)),
        )
        path = tmp_path / "recordings" / "old" / Path(name).with_suffix(".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rec.to_json().replace('"target": "amx"', '"target": "old"'))

    assert cli.main(["--adopt", "old", "amx"], root=tmp_path) == 0

    out = capsys.readouterr().out
    assert "adopted    recordings/old/lesson/01_a.json -> recordings/amx/lesson/01_a.json" in out
    assert (
        "kept       recordings/old/lesson/02_b.json: not a amx recording (CPU flag amx_bf16 missing; "
        "amx requires amx_bf16 present)" in out
    )
    adopted = store.read("lesson/01_a.py", "amx")
    assert adopted is not None
    assert adopted.machine["target"]["adopted_from"] == "old" and adopted.machine["cpu"]["model"] == "Xeon"
    assert (tmp_path / "recordings" / "old" / "lesson" / "02_b.json").exists()
    assert cli.main(["--adopt", "old", "amx", "lesson/01_a.py"], root=tmp_path) == 0  # nothing left to move
    # The emulated target checks its proof: these never ran with its limit.
    assert cli.main(["--adopt", "old", "amx-limited"], root=tmp_path) == 0
    assert "its check printed None, amx-limited needs '1'" in capsys.readouterr().out


# -- bundles -------------------------------------------------------------------------------


def bundle(root: Path, target: str, flags, model: str, names=("lesson/01_a.py",), check=None) -> Path:
    from recorded.model.snippets import load

    recs = []
    for name in names:
        s = load(root / "snippets", name)
        recs.append(
            Recording(
                name,
                target,
                s.sha256(),
                Ending.OK,
                0,
                ["x"],
                [],
                0.1,
                "2026-12-02T00:00:00Z",
                Machine(FAKE_MACHINE, cpu=fake_cpu(flags, model), target={"name": target, "check": check}),
            )
        )
    path = root / f"bundle-{target}-{model}.json"
    path.write_text(bundle_json(recs), encoding="utf-8")
    return path


def test_a_bundle_from_a_machine_that_is_not_its_kind_is_refused_naming_file_target_and_values(
    tmp_path, capsys
):
    make(tmp_path)
    path = bundle(tmp_path, "small", EPYC, "EPYC")

    assert cli.main(["--import", str(path)], root=tmp_path) == 1

    out = capsys.readouterr().out
    assert str(path) in out
    assert (
        "refused      lesson/01_a.py on small: it does not prove small (CPU flag avx512f "
        "present; small requires avx2 present, avx512f absent)"
    ) in out
    assert not (tmp_path / "recordings").exists()


def test_a_recording_that_ran_without_its_targets_limits_proves_it_to_no_reader(tmp_path, capsys, machine_is):
    # One rule for the audit, --adopt and an import: the Xeon's amx recording, relabelled as the
    # limited target, passes the check by its printed line but says it ran without the limit.
    store, rec = recorded_on_xeon(tmp_path, machine_is)
    rec.target = "amx-limited"
    rec.machine = Machine(rec.machine, target={**rec.machine.run_for, "name": "amx-limited", "check": "1"})
    unlimited = "it ran with {'CUDA_VISIBLE_DEVICES': ''}, amx-limited runs with"

    store.write(rec)
    assert any(unlimited in p for p in admit.audit(store))

    (tmp_path / "recordings" / "amx-limited").rename(tmp_path / "recordings" / "old")
    cli.main(["--adopt", "old", "amx-limited"], root=tmp_path)
    assert unlimited in capsys.readouterr().out  # kept where it was
    assert store.read("lesson/01_a.py", "amx-limited") is None

    path = tmp_path / "b.json"
    path.write_text(bundle_json([rec]), encoding="utf-8")
    assert cli.main(["--import", str(path)], root=tmp_path) == 1
    assert unlimited in capsys.readouterr().out


def test_a_bundle_that_would_mix_machines_in_a_tab_is_refused_unless_it_holds_the_whole_tab(
    tmp_path, capsys, machine_is
):
    make(tmp_path)
    machine_is(XEON, "Xeon A")
    assert cli.main(["--target", "amx"], root=tmp_path) == 0
    before = tree(tmp_path)
    capsys.readouterr()

    part = bundle(tmp_path, "amx", XEON, "Xeon B")
    assert cli.main(["--import", str(part)], root=tmp_path) == 1
    out = capsys.readouterr().out
    assert "lesson/01_a.py on amx comes from Xeon B" in out and "from Xeon A" in out
    assert "one tab shows one machine" in out and tree(tmp_path) == before

    both = ("lesson/01_a.py", "lesson/02_b.py")
    whole = [
        bundle(tmp_path, "amx", XEON, "Xeon B", both),
        bundle(tmp_path, "amx-limited", XEON, "Xeon B", both, "1"),
    ]
    merged = json.loads(whole[0].read_text())["recordings"] + json.loads(whole[1].read_text())["recordings"]
    one = tmp_path / "whole.json"
    one.write_text(bundle_json([Recording.from_dict(r, "a bundle") for r in merged]), encoding="utf-8")
    assert cli.main(["--import", str(one)], root=tmp_path) == 0
    assert {stored_machine(tmp_path, p)["cpu"]["model"] for p in tree(tmp_path)} == {"Xeon B"}


# -- machines.py ---------------------------------------------------------------------------


def test_identity_ignores_load_dates_and_the_tree():
    a = dict(FAKE_MACHINE, load_average=0.1, git={"commit": "a"})
    b = dict(FAKE_MACHINE, load_average=3.0, git={"commit": "b"}, os="other")
    assert Machine(a).same_as(Machine(b)) and Machine(a).differences(Machine(b)) == []
    c = dict(FAKE_MACHINE, cpu=fake_cpu(XEON, "Xeon"))
    assert "cpu: 'Test CPU' != 'Xeon'" in Machine(a).differences(Machine(c))
