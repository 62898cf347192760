"""Tests for the recorder's bundles (--bundle, --import), shards (--shard), --compare and --out.

Like tests/recorder/test_recorder.py, each test builds a throwaway project under tmp_path with tiny
snippets that never import torch, and drives ``recorded.cli.main(argv, root=tmp_path)``.
The machine description is faked and no NVIDIA driver is seen, unless a test says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fakes import FAKE_GPU, FAKE_MACHINE
from projects import add_snippet
from recorded import cli
from recorded.config import targets
from recorded.model import lines
from recorded.model.machines import Machine
from recorded.model.recording import Ending, Recording, utc_stamp
from recorded.model.snippets import discover, load
from recorded.model.store import State, Store
from recorded.recorder import bundles, runner
from recorded.recorder.record import plan
from recorded.recorder.shard import split as shard

REPO = Path(__file__).resolve().parents[2]
HELLO = 'print("hello")\n'
BOOM = 'print("before")\nraise ValueError("boom")\n'
NEEDS_CUDA = '# /// script\n# [tool.recorded]\n# requires = ["cuda"]\n# ///\n'


pytestmark = pytest.mark.usefixtures("fake_machine")


@pytest.fixture
def gpu(fake_machine):
    """Pretend this machine has a usable NVIDIA GPU (the snippets here never touch it)."""
    fake_machine.gpu = True


# -- helpers ---------------------------------------------------------------------------------


def main(root: Path, *argv: str | Path) -> int:
    return cli.main([str(a) for a in argv], root=root)


def rec_path(root: Path, name: str, target: str = "cpu", base: str = "recordings") -> Path:
    return root / base / target / Path(name).with_suffix(".json")


def files(base: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under base, by relative path, with its bytes and its mtime in ns."""
    if not base.exists():
        return {}
    return {
        p.relative_to(base).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def recordings(root: Path) -> dict[str, tuple[bytes, int]]:
    return files(root / "recordings")


def a_recording(
    root: Path,
    name: str,
    target: str = "cpu",
    status: str = "ok",
    stdout=("hello",),
    duration: float = 0.1,
    sha256: str | None = None,
    when: str = "2026-01-01T00:00:00Z",
) -> Recording:
    """A recording of the snippet as it is now (or of other bytes, given sha256)."""
    sha = sha256 or hashlib.sha256((root / "snippets" / name).read_bytes()).hexdigest()
    machine = dict(FAKE_MACHINE, gpu=dict(FAKE_GPU) if target == "cuda" else None)
    return Recording(
        snippet=name,
        target=target,
        sha256=sha,
        status=Ending(status),
        exit_code=0 if status == "ok" else (None if status == "timeout" else 1),
        stdout=list(stdout),
        stderr=[] if status == "ok" else ["ValueError: boom"],
        duration_s=duration,
        recorded_at=when,
        machine=Machine(machine),
    )


def write_bundle(path: Path, *recs: Recording) -> Path:
    return bundles.write_bundle(path, list(recs))


def edit_bundle(path: Path, change) -> None:
    """Change a bundle's JSON as a careless person or a damaged upload would."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


# -- 1. --bundle -----------------------------------------------------------------------------


def test_bundle_holds_every_recording_the_run_made_exactly_as_stored(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py", 'print("b")\n')
    bundle = tmp_path / "out" / "cpu.json"  # its folder is made

    assert main(tmp_path, "--bundle", bundle) == 0

    data = json.loads(bundle.read_text(encoding="utf-8"))
    assert list(data) == ["bundle", "created_at", "machine", "recordings", "recordings_sha256"]
    assert data["bundle"] == 1 and data["created_at"].endswith("Z")
    assert data["machine"]["description"] == "Test CPU (AVX2), 2 cores"
    assert data["machine"]["targets"] == ["cpu"]
    assert data["recordings"] == [
        json.loads(rec_path(tmp_path, n).read_text(encoding="utf-8"))
        for n in ("lesson/01_a.py", "lesson/02_b.py")
    ]
    assert "bundle " + str(bundle) + ": 2 recordings" in capsys.readouterr().err
    assert sorted(p.name for p in bundle.parent.iterdir()) == ["cpu.json"]  # no temporary file left


def test_bundle_holds_only_what_this_run_recorded(tmp_path):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    assert main(tmp_path) == 0
    add_snippet(tmp_path, "lesson/02_b.py", 'print("changed")\n')

    assert main(tmp_path, "--bundle", tmp_path / "b.json") == 0

    data = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert [r["snippet"] for r in data["recordings"]] == ["lesson/02_b.py"]


def test_bundle_is_written_empty_when_nothing_needs_recording(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    assert main(tmp_path) == 0
    before = recordings(tmp_path)

    assert main(tmp_path, "--bundle", tmp_path / "b.json") == 0
    data = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert (data["recordings"], data["machine"]) == ([], None)

    assert main(tmp_path, "--import", tmp_path / "b.json") == 0
    assert recordings(tmp_path) == before
    assert "1 bundle: 0 imported, 0 unchanged, 0 refused" in capsys.readouterr().out


def test_bundle_round_trip_gives_the_recording_back_byte_for_byte(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    assert main(tmp_path, "lesson/02_b.py", "--bundle", tmp_path / "b.json") == 0
    path = rec_path(tmp_path, "lesson/02_b.py")
    original = path.read_bytes()
    path.unlink()
    capsys.readouterr()

    assert main(tmp_path, "--import", tmp_path / "b.json") == 0

    assert path.read_bytes() == original
    assert sorted(recordings(tmp_path)) == ["cpu/lesson/02_b.json"]
    out = capsys.readouterr().out
    assert "  imported     lesson/02_b.py on cpu\n" in out
    assert "1 bundle: 1 imported, 0 unchanged, 0 refused" in out


def test_bundle_with_target_cuda_and_named_snippets_imports_into_another_checkout(tmp_path, gpu, runs):
    here, there = tmp_path / "gpu-runner", tmp_path / "merge"
    for root in (here, there):
        add_snippet(root, "lesson/01_a.py")
        add_snippet(root, "lesson/02_gpu.py", NEEDS_CUDA + HELLO)
        add_snippet(root, "lesson/03_c.py")

    bundle = tmp_path / "b.json"
    assert main(here, "--target", "cuda", "lesson/02_gpu.py", "lesson/03_c.py", "--bundle", bundle) == 0
    assert runs == [("lesson/02_gpu.py", "cuda"), ("lesson/03_c.py", "cuda")]

    assert main(there, "--import", tmp_path / "b.json") == 0
    assert files(there / "recordings").keys() == {"cuda/lesson/02_gpu.json", "cuda/lesson/03_c.json"}
    for name in ("lesson/02_gpu.py", "lesson/03_c.py"):
        assert rec_path(there, name, "cuda").read_bytes() == rec_path(here, name, "cuda").read_bytes()
        store = Store(there)
        assert store.standing(load(there / "snippets", name), store.targets["cuda"]).state is State.FRESH


def test_bundle_into_a_folder_is_named_for_its_kinds_machine_and_day(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    out = tmp_path / "out"

    assert main(tmp_path, "--out", tmp_path / "scratch", "--bundle", f"{out}/") == 0

    (bundle,) = out.iterdir()
    assert bundle.name == f"cpu-test-cpu-{utc_stamp()[:10]}.json"
    assert [r["snippet"] for r in json.loads(bundle.read_text())["recordings"]] == ["lesson/01_a.py"]
    assert f"bundle {bundle}: 1 recording" in capsys.readouterr().err
    assert recordings(tmp_path) == {}  # --out: the project's recordings untouched


def test_budget_records_what_fits_by_the_stored_durations_and_says_what_it_left(tmp_path, runs, capsys):
    for name in ("lesson/01_a.py", "lesson/02_b.py", "lesson/03_c.py"):
        add_snippet(tmp_path, name)
    assert main(tmp_path) == 0
    for name, seconds in (("01_a", 50.0), ("02_b", 200.0), ("03_c", 100.0)):  # as a slower machine took
        path = rec_path(tmp_path, f"lesson/{name}.py")
        data = json.loads(path.read_text())
        path.write_text(json.dumps(data | {"duration_s": seconds}, indent=2) + "\n")
    runs.clear()
    capsys.readouterr()

    assert main(tmp_path, "--force", "--budget", "160") == 0

    err = capsys.readouterr().err
    assert "to record: 2 snippets on cpu, about 150 s by the stored durations (budget 160 s)" in err
    assert "left for another machine, over the budget: lesson/02_b.py on cpu" in err
    assert runs == [("lesson/01_a.py", "cpu"), ("lesson/03_c.py", "cpu")]


def test_bundle_write_that_fails_leaves_no_temporary_file(tmp_path, monkeypatch):
    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        bundles.write_bundle(tmp_path / "b.json", [])
    assert list(tmp_path.iterdir()) == []


# -- 2. --import -----------------------------------------------------------------------------


def test_importing_the_same_bundle_twice_changes_nothing(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    write_bundle(
        tmp_path / "b.json", a_recording(tmp_path, "lesson/01_a.py"), a_recording(tmp_path, "lesson/02_b.py")
    )
    assert main(tmp_path, "--import", tmp_path / "b.json") == 0
    first = recordings(tmp_path)
    assert len(first) == 2
    capsys.readouterr()

    assert main(tmp_path, "--import", tmp_path / "b.json", tmp_path / "b.json") == 0

    assert recordings(tmp_path) == first  # bytes and mtimes
    out = capsys.readouterr().out
    assert out.count("  unchanged    lesson/01_a.py on cpu: already here, byte for byte") == 2
    assert "2 bundles: 0 imported, 4 unchanged, 0 refused" in out


def test_import_replaces_an_older_good_recording_and_says_so(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    Store(tmp_path).write(a_recording(tmp_path, "lesson/01_a.py", stdout=["old"]))
    new = a_recording(tmp_path, "lesson/01_a.py", stdout=["new"], when="2026-02-01T00:00:00Z")
    write_bundle(tmp_path / "b.json", new)

    assert main(tmp_path, "--import", tmp_path / "b.json") == 0

    assert rec_path(tmp_path, "lesson/01_a.py").read_text(encoding="utf-8") == new.to_json()
    assert "imported     lesson/01_a.py on cpu: replaces the recording from 2026-01-01T00:00:00Z" in (
        capsys.readouterr().out
    )


def test_bundle_of_an_outdated_snippet_is_refused_as_a_whole(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    assert main(tmp_path, "--bundle", tmp_path / "b.json") == 0
    for name in ("lesson/01_a.py", "lesson/02_b.py"):
        rec_path(tmp_path, name).unlink()
    add_snippet(tmp_path, "lesson/02_b.py", 'print("edited since")\n')
    capsys.readouterr()

    assert main(tmp_path, "--import", tmp_path / "b.json") == 1

    assert recordings(tmp_path) == {}  # not even the one that is still current
    out = capsys.readouterr().out
    assert f"{tmp_path / 'b.json'}: refused, nothing imported: 1 recording cannot be imported" in out
    assert "  not imported lesson/01_a.py on cpu\n" in out
    assert (
        "  refused      lesson/02_b.py on cpu: outdated: recorded with an earlier version of the snippet's code"
        in out
    )
    assert "1 bundle: 0 imported, 0 unchanged, 1 refused, 1 not imported; 1 bundle refused as a whole" in out
    assert "import it as an earlier version's output with --allow-stale" in out
    assert re.search(r"\(code sha256 [0-9a-f]{12}…, its code now has [0-9a-f]{12}…\)", out)


def test_allow_stale_imports_an_outdated_recording_that_then_reads_as_stale(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    assert main(tmp_path, "--bundle", tmp_path / "b.json") == 0
    original = rec_path(tmp_path, "lesson/01_a.py").read_bytes()
    rec_path(tmp_path, "lesson/01_a.py").unlink()
    snippet_path = add_snippet(tmp_path, "lesson/01_a.py", 'print("edited since")\n')
    capsys.readouterr()

    assert main(tmp_path, "--import", tmp_path / "b.json", "--allow-stale") == 0

    assert rec_path(tmp_path, "lesson/01_a.py").read_bytes() == original  # as it was, not re-hashed
    assert "imported     lesson/01_a.py on cpu: of an earlier version of the code" in capsys.readouterr().out
    store = Store(tmp_path)
    status = store.standing(discover(snippet_path.parents[1])[0], store.targets["cpu"])
    state, rec = status.state, status.recording
    assert state is State.STALE and rec is not None and rec.stdout == ["hello"]
    assert main(tmp_path, "--check") == 1
    assert "error lesson/01_a.py on cpu: stale" in capsys.readouterr().out


def test_allow_stale_never_replaces_a_fresh_recording(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    assert main(tmp_path) == 0
    fresh = recordings(tmp_path)
    write_bundle(tmp_path / "b.json", a_recording(tmp_path, "lesson/01_a.py", sha256="a" * 64))

    assert main(tmp_path, "--import", tmp_path / "b.json", "--allow-stale") == 1

    assert recordings(tmp_path) == fresh
    assert "refused      lesson/01_a.py on cpu: stale: it would replace a fresh recording" in (
        capsys.readouterr().out
    )


def test_a_failed_run_in_a_bundle_never_replaces_a_good_recording(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    assert main(tmp_path, "lesson/01_a.py") == 0
    good = recordings(tmp_path)
    write_bundle(
        tmp_path / "b.json",
        a_recording(tmp_path, "lesson/01_a.py", status="error"),
        a_recording(tmp_path, "lesson/02_b.py"),
    )
    capsys.readouterr()

    assert main(tmp_path, "--import", tmp_path / "b.json") == 1

    after = recordings(tmp_path)
    assert after["cpu/lesson/01_a.json"] == good["cpu/lesson/01_a.json"]
    assert "cpu/lesson/02_b.json" in after  # the rest of the bundle is imported
    out = capsys.readouterr().out
    assert (
        "  refused      lesson/01_a.py on cpu: a failed run (error, exit code 1) never replaces "
        "the good recording here"
    ) in out
    assert "  imported     lesson/02_b.py on cpu\n" in out
    assert out.endswith("1 bundle: 1 imported, 0 unchanged, 1 refused\n")


def test_a_failed_run_in_a_bundle_is_imported_where_there_is_no_good_recording(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", BOOM)
    add_snippet(tmp_path, "lesson/02_b.py", BOOM)
    assert main(tmp_path, "lesson/02_b.py") == 1  # a failed recording here
    failed = a_recording(tmp_path, "lesson/01_a.py", status="error")
    also = a_recording(tmp_path, "lesson/02_b.py", status="timeout")
    write_bundle(tmp_path / "b.json", failed, also)
    capsys.readouterr()

    assert main(tmp_path, "--import", tmp_path / "b.json") == 0

    assert rec_path(tmp_path, "lesson/01_a.py").read_text(encoding="utf-8") == failed.to_json()
    assert rec_path(tmp_path, "lesson/02_b.py").read_text(encoding="utf-8") == also.to_json()
    assert "a failed run (error); no good recording was here" in capsys.readouterr().out


def test_import_with_out_merges_into_that_folder(tmp_path):
    add_snippet(tmp_path, "lesson/01_a.py")
    write_bundle(tmp_path / "b.json", a_recording(tmp_path, "lesson/01_a.py"))

    assert main(tmp_path, "--import", tmp_path / "b.json", "--out", tmp_path / "mine") == 0

    assert recordings(tmp_path) == {}
    assert list(files(tmp_path / "mine")) == ["cpu/lesson/01_a.json"]


def _tamper(data):
    data["recordings"][0]["stdout"] = ["a number nobody printed"]


MALFORMED = {
    "not json": (lambda p: p.write_text("{not json", encoding="utf-8"), "not a JSON bundle"),
    "binary": (lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\xff\x00"), "not a JSON bundle"),
    "truncated": (lambda p: p.write_text(p.read_text()[:200], encoding="utf-8"), "not a JSON bundle"),
    "a list": (lambda p: p.write_text("[]", encoding="utf-8"), "not a bundle"),
    "a recording": (
        lambda p: p.write_text(json.dumps(json.loads(p.read_text())["recordings"][0])),
        "not a bundle",
    ),
    "other version": (lambda p: edit_bundle(p, lambda d: d.update(bundle=2)), "bundle format 2"),
    "key missing": (
        lambda p: edit_bundle(p, lambda d: d.pop("recordings_sha256")),
        "missing key(s) ['recordings_sha256']",
    ),
    "unknown key": (lambda p: edit_bundle(p, lambda d: d.update(extra=1)), "unknown key(s) ['extra']"),
    "recordings not a list": (
        lambda p: edit_bundle(p, lambda d: d.update(recordings={})),
        "recordings must be a list",
    ),
    "recording schema": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].update(schema=99)),
        "recording 1 (lesson/01_a.py): schema version 99",
    ),
    "recording field type": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].update(stdout="x")),
        "field 'stdout' is missing or of the wrong type",
    ),
    "recording unknown field": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].update(note="x")),
        "unknown field(s) ['note']",
    ),
    "recording field missing": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].pop("exit_code")),
        "field(s) ['exit_code'] missing",
    ),
    "bad sha256": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].update(sha256="xyz")),
        "sha256 'xyz' is not 64 lowercase hex digits",
    ),
    "bad status": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].update(status="fine")),
        "status 'fine' is not one of",
    ),
    "code beyond a snippet's size": (
        lambda p: edit_bundle(p, lambda d: d["recordings"][0].update(code="x" * 300_000)),
        "the code it ran holds 300,000 characters",
    ),
    "tampered": (lambda p: edit_bundle(p, _tamper), "do not match its checksum"),
}


@pytest.mark.parametrize("damage, message", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_bundle_is_refused_naming_the_file_and_imports_nothing(tmp_path, capsys, damage, message):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    bundle = write_bundle(
        tmp_path / "b.json", a_recording(tmp_path, "lesson/01_a.py"), a_recording(tmp_path, "lesson/02_b.py")
    )
    damage(bundle)

    assert main(tmp_path, "--import", bundle) == 1

    out = capsys.readouterr().out
    assert f"refused    {bundle}: " in out and message in out
    assert recordings(tmp_path) == {}


#: A table of cases, alike in shape on purpose: what is changed in a good bundle, and what the refusal says.
BAD_RECORDINGS = {
    "unknown snippet": (
        lambda d: d["recordings"][0].update(snippet="lesson/99_nope.py"),
        "lesson/99_nope.py on cpu: unknown snippet: 'lesson/99_nope.py': no such snippet",
    ),
    "outside snippets": (
        lambda d: d["recordings"][0].update(snippet="../outside.py"),
        "../outside.py on cpu: unknown snippet: '../outside.py': name a file under snippets/",
    ),
    "target unknown": (
        lambda d: d["recordings"][0].update(target="tpu"),
        "unknown target 'tpu'; the targets are ['cpu', 'cuda']",
    ),
    "target the snippet cannot run on": (
        lambda d: d["recordings"][0].update(snippet="lesson/03_gpu.py"),
        "lesson/03_gpu.py on cpu: the snippet needs cuda, which the cpu target does not offer",
    ),
    "cuda without a gpu": (
        lambda d: d["recordings"][0].update(target="cuda"),
        "lesson/01_a.py on cuda: it does not prove cuda (no GPU; cuda requires an NVIDIA GPU",
    ),
    "twice": (
        lambda d: d["recordings"][1].update(snippet="lesson/01_a.py"),
        "lesson/01_a.py on cpu: recorded twice in this bundle",
    ),
}


@pytest.mark.parametrize("change, message", BAD_RECORDINGS.values(), ids=BAD_RECORDINGS.keys())
def test_bundle_with_a_recording_that_does_not_fit_this_project_is_refused_whole(
    tmp_path, capsys, change, message
):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    add_snippet(tmp_path, "lesson/03_gpu.py", NEEDS_CUDA + HELLO)
    (tmp_path / "outside.py").write_text(HELLO)
    recs = [a_recording(tmp_path, "lesson/01_a.py"), a_recording(tmp_path, "lesson/02_b.py")]
    data = json.loads(bundles.bundle_json(recs))
    change(data)
    data["recordings_sha256"] = bundles.digest(data["recordings"])  # a bundle made elsewhere, not damaged
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")

    assert main(tmp_path, "--import", bundle) == 1

    out = capsys.readouterr().out
    assert str(bundle) in out and message in out
    assert recordings(tmp_path) == {}


def test_one_refused_bundle_does_not_stop_the_next(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    good = write_bundle(tmp_path / "good.json", a_recording(tmp_path, "lesson/01_a.py"))

    assert main(tmp_path, "--import", bad, good) == 1

    assert list(recordings(tmp_path)) == ["cpu/lesson/01_a.json"]
    assert "2 bundles: 1 imported, 0 unchanged, 0 refused; 1 bundle refused as a whole" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--import", "{tmp}/nope.json"], "--import {tmp}/nope.json: no such file"),
        (["--import"], "expected at least one argument"),
        (["lesson/01_a.py", "--import", "{tmp}/b.json"], "--import takes bundle files only"),
        (
            ["--import", "{tmp}/b.json", "lesson/01_a.py"],
            "--import lesson/01_a.py: no such file (--import takes bundle files only, not snippets)",
        ),
        (["--import", "{tmp}/b.json", "--shard", "1/2"], "--shard goes with"),
        (["--import", "{tmp}/b.json", "--bundle", "{tmp}/c.json"], "--bundle goes with"),
        (["--check", "--bundle", "{tmp}/c.json"], "--bundle goes with"),
        (["--list", "--import", "{tmp}/b.json"], "not allowed with argument"),
        (["--compare", "--check"], "not allowed with argument"),
        (["--allow-stale"], "--allow-stale goes with --import"),
        (["--target", "cpu", "--replace-machine", "--budget", "60"], "drop --budget and --shard"),
        (["--target", "cpu", "--replace-machine", "--shard", "1/2"], "drop --budget and --shard"),
    ],
    ids=[
        "missing-file",
        "no-file",
        "with-snippet",
        "snippet-after",
        "with-shard",
        "with-bundle",
        "check-bundle",
        "list-import",
        "compare-check",
        "allow-stale-alone",
        "replace-budget",
        "replace-shard",
    ],
)
def test_usage_errors_exit_2_and_change_nothing(tmp_path, runs, capsys, argv, message):
    add_snippet(tmp_path, "lesson/01_a.py")
    write_bundle(tmp_path / "b.json", a_recording(tmp_path, "lesson/01_a.py"))
    argv = [a.format(tmp=tmp_path) for a in argv]

    code: str | int | None
    try:
        code = main(tmp_path, *argv)
    except SystemExit as exc:
        code = exc.code

    assert code == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert runs == [] and recordings(tmp_path) == {} and not (tmp_path / "c.json").exists()


# -- 3. --shard ------------------------------------------------------------------------------

DURATIONS = {"01_a": 10.0, "02_b": 9.0, "03_c": 8.0, "04_d": 2.0, "05_e": 1.0, "06_f": 1.0, "07_g": None}


@pytest.fixture
def sharded(tmp_path) -> Path:
    """Seven snippets with recorded durations (one never recorded) and one that needs cuda."""
    store = Store(tmp_path)
    for stem, seconds in DURATIONS.items():
        add_snippet(tmp_path, f"lesson/{stem}.py")
        if seconds is not None:
            store.write(a_recording(tmp_path, f"lesson/{stem}.py", duration=seconds))
    add_snippet(tmp_path, "lesson/08_gpu.py", NEEDS_CUDA + HELLO)
    return tmp_path


def listed(root: Path, capsys, *argv: str) -> list[str]:
    capsys.readouterr()
    assert main(root, "--list", "--target", "cpu", *argv) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    return [line.split()[0] for line in lines if not line.startswith("== ")]  # not the lesson lines


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_shards_cover_every_snippet_exactly_once(sharded, capsys, count):
    every = listed(sharded, capsys)
    applicable = [n for n in every if n != "lesson/08_gpu.py"]

    parts = [listed(sharded, capsys, "--shard", f"{i}/{count}") for i in range(1, count + 1)]

    assert sorted(n for part in parts for n in part) == applicable
    assert all(part == sorted(part) for part in parts)  # each in name order


def test_shards_balance_by_recorded_duration_longest_first(sharded):
    store = Store(sharded)
    items = plan(store, discover(store.snippets_dir), (store.targets["cpu"],))

    def names(i, n):
        return [x.snippet.name.removeprefix("lesson/").removesuffix(".py") for x in shard(items, i, n)]

    # 07_g has no duration: it counts as the median of the known ones, (2 + 8) / 2 = 5.
    # Longest first, each to the lightest shard: 10 -> 1; 9 -> 2; 8 -> 2 (9 < 10);
    # 5 -> 1 (10 < 17); 2 -> 1 (15 < 17); 1 -> 1 (17 = 17: the lower number); 1 -> 2.
    assert names(1, 2) == ["01_a", "04_d", "05_e", "07_g"]
    assert names(2, 2) == ["02_b", "03_c", "06_f"]
    # 10 -> 1; 9 -> 2; 8 -> 3; 5 -> 3; 2 -> 2; 1 -> 1; 1 -> 1 (11 = 11 < 13).
    assert [names(i, 3) for i in (1, 2, 3)] == [["01_a", "05_e", "06_f"], ["02_b", "04_d"], ["03_c", "07_g"]]
    for n in (2, 3, 4, 5):
        loads = [sum(x.last_duration or 5.0 for x in shard(items, i, n)) for i in range(1, n + 1)]
        assert max(loads) - min(loads) <= 10.0  # greedy LPT: off by at most the longest job


def test_shard_split_is_the_same_whatever_order_the_items_come_in(sharded):
    store = Store(sharded)
    items = plan(store, discover(store.snippets_dir), (store.targets["cpu"],))
    for n in (2, 3, 4):
        for i in range(1, n + 1):
            forward = [x.snippet.name for x in shard(items, i, n)]
            backward = [x.snippet.name for x in shard(list(reversed(items)), i, n)]
            assert sorted(forward) == sorted(backward)


def test_without_any_duration_every_snippet_counts_as_one_second_and_names_break_ties(tmp_path):
    for stem in ("a", "b", "c", "d", "e"):
        add_snippet(tmp_path, f"lesson/{stem}.py")
    store = Store(tmp_path)
    items = plan(store, discover(store.snippets_dir), (store.targets["cuda"],))

    assert [x.snippet.name for x in shard(items, 1, 2)] == ["lesson/a.py", "lesson/c.py", "lesson/e.py"]
    assert [x.snippet.name for x in shard(items, 2, 2)] == ["lesson/b.py", "lesson/d.py"]


def test_shard_says_when_no_duration_is_known(tmp_path, capsys):
    for stem in ("a", "b", "c"):
        add_snippet(tmp_path, f"lesson/{stem}.py")

    assert main(tmp_path, "--list", "--target", "cuda", "--shard", "2/2") == 0

    assert capsys.readouterr().err.startswith(
        "shard 2/2 on cuda takes 1 of 3 snippets (no durations recorded on cuda yet, so each counts "
        "as 1 s):\n  lesson/b.py (no duration yet)\nthis machine is: cpu; not: cuda"
    )


def test_shard_records_only_its_own_snippets_and_says_which(sharded, runs, capsys):
    assert main(sharded, "--shard", "2/3", "--force") == 0

    assert runs == [("lesson/02_b.py", "cpu"), ("lesson/04_d.py", "cpu")]
    err = capsys.readouterr().err
    assert "shard 2/3 on cpu takes 2 of 7 snippets (about 11 s of 36 s by recorded durations):" in err
    assert "  lesson/02_b.py (9.0 s)\n  lesson/04_d.py (2.0 s)\n" in err


def test_shard_with_nothing_to_take_records_nothing(sharded, runs, capsys):
    every = [f"lesson/{stem}.py" for stem in DURATIONS]

    assert main(sharded, *every[:2], "--shard", "3/3", "--force") == 0

    assert runs == []
    assert "shard 3/3 on cpu takes 0 of 2 snippets (about 0 s of 19 s by recorded durations)." in (
        capsys.readouterr().err
    )


def test_shard_check_shows_only_its_part(sharded, capsys):
    assert main(sharded, "--check", "--target", "cpu", "--shard", "3/3") == 1  # 03_c, and 07_g is missing

    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 fresh, 1 to record (1 required), 0 not applicable"
    assert (
        "error lesson/07_g.py on cpu: missing (not recorded yet); it must be fresh: cpu is marked required"
        in out
    )


@pytest.mark.parametrize("value", ["0/2", "3/2", "1/0", "0/0", "-1/2", "a/b", "1", "1/2/3", "", "1.0/2"])
def test_bad_shard_values_exit_2_with_a_clear_error(tmp_path, runs, capsys, value):
    add_snippet(tmp_path, "lesson/01_a.py")

    with pytest.raises(SystemExit) as raised:
        main(tmp_path, f"--shard={value}")

    assert raised.value.code == 2
    assert f"argument --shard: {value!r}: give I/N with 1 <= I <= N" in capsys.readouterr().err
    assert runs == [] and recordings(tmp_path) == {}


def test_shard_function_refuses_an_impossible_shard(tmp_path):
    with pytest.raises(ValueError, match="need 1 <= I <= N"):
        shard([], 3, 2)


# -- 4. --compare and --out ------------------------------------------------------------------

MEASURE = """
    print("device: cpu")
    print("float32:  3.50 ms per batch (median of 30)")
    print("first compiled call: 1.2 s (tracing and code generation)")
    print("bf16 faster than fp32 here: True")
    print("same results: True")
"""


@pytest.fixture
def published(tmp_path) -> Path:
    """A project whose CPU and CUDA recordings were made on other machines."""
    add_snippet(tmp_path, "lesson/01_measure.py", MEASURE)
    add_snippet(tmp_path, "lesson/02_gpu.py", NEEDS_CUDA + 'print("gpu ok: True")\n')
    store = Store(tmp_path)
    store.write(
        a_recording(
            tmp_path,
            "lesson/01_measure.py",
            duration=2.5,
            stdout=[
                "device: cpu",
                "float32:  16.70 ms per batch (median of 30)",
                "first compiled call: 11.1 s (tracing and code generation)",
                "bf16 faster than fp32 here: False",
                "same results: True",
            ],
        )
    )
    store.write(
        a_recording(
            tmp_path,
            "lesson/01_measure.py",
            "cuda",
            duration=4.0,
            stdout=[
                "device: cuda",
                "float32:  0.40 ms per batch (median of 30)",
                "first compiled call: 20.5 s (tracing and code generation)",
                "bf16 faster than fp32 here: True",
                "same results: True",
                "only on cuda: 7 ms",
            ],
        )
    )
    store.write(a_recording(tmp_path, "lesson/02_gpu.py", "cuda", stdout=["gpu ok: True"]))
    return tmp_path


def test_compare_prints_this_machine_beside_the_published_recordings(published, capsys):
    before = recordings(published)

    assert main(published, "--compare") == 0

    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100, [x for x in out.splitlines() if len(x) > 100]
    rows = [" ".join(line.split()) for line in out.splitlines()]
    assert rows[0] == "This machine: Test CPU (AVX2), 2 cores · torch 0.0-test, run as cpu."
    assert rows[1] == "Published: CPU Test CPU (AVX2), 2 cores · torch 0.0-test"
    assert rows[2] == "CUDA Test CPU (AVX2), 2 cores, with Test GPU · torch 0.0-test"
    assert "unit included" in out and "Published tabs may have run other PyTorch versions" in out
    assert any(r.startswith("lesson/01_measure.py: ok here, 1 run, ") for r in rows)
    assert "here CPU CUDA" in rows
    assert "float32 3.50 ms 16.70 ms 0.40 ms" in rows
    assert "first compiled call 1.2 s 11.1 s 20.5 s" in rows
    assert "bf16 faster than fp32 here True False True" in rows
    assert "same results True True True" in rows
    assert "only on cuda - - 7 ms" in rows
    assert (
        "lesson/02_gpu.py: skipped here (needs cuda, and this run is on cpu (cuda: no NVIDIA driver on this machine (a pretend one)))"
        in " ".join(rows)
    )
    assert not any(r.startswith("device") for r in rows)  # neither a verdict nor a timing
    assert (
        "Summary: 1 of the 2 verdicts this machine printed agree with every published tab that printed them; these differ:"
        in " ".join(rows)
    )
    assert "lesson/01_measure.py: bf16 faster than fp32 here: True here; False on CPU" in " ".join(rows)
    assert recordings(published) == before  # bytes and mtimes


def test_compare_never_writes_recordings_not_even_a_folder(tmp_path, capsys):
    add_snippet(tmp_path, "lesson/01_a.py", 'print("fast: True")\n')

    assert main(tmp_path, "--compare") == 0

    assert not (tmp_path / "recordings").exists()
    out = capsys.readouterr().out
    assert "Published:" not in out  # nothing recorded anywhere: no column to show
    assert "Summary: no verdict here to compare with the published tabs." in out


def test_compare_respects_named_snippets_and_a_failure_here(published, runs, capsys):
    add_snippet(published, "lesson/03_boom.py", BOOM)
    before = recordings(published)

    assert main(published, "--compare", "lesson/03_boom.py") == 1

    assert runs == [("lesson/03_boom.py", "cpu")]
    out = capsys.readouterr().out
    assert "lesson/01_measure.py" not in out
    assert "lesson/03_boom.py: error here, 1 run, " in out and "  exit code 1: ValueError: boom" in out
    assert recordings(published) == before


def test_compare_with_target_cuda_on_a_machine_without_a_gpu_exits_2(published, runs, capsys):
    assert main(published, "--compare", "--target", "cuda") == 2

    err = capsys.readouterr().err
    assert "--target cuda: no NVIDIA driver on this machine" in err and "Nothing was run." in err
    assert runs == []


def test_compare_on_a_gpu_runs_the_cuda_target(published, gpu, runs, capsys):
    before = recordings(published)

    assert main(published, "--compare") == 0

    assert runs == [("lesson/01_measure.py", "cuda"), ("lesson/02_gpu.py", "cuda")]
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("run as cuda.")
    assert "skipped here" not in out
    assert recordings(published) == before


def test_compare_with_out_keeps_this_machines_runs_elsewhere(published, capsys):
    before = recordings(published)

    assert main(published, "--compare", "--out", published / "mine", "--bundle", published / "b.json") == 0

    assert recordings(published) == before
    assert list(files(published / "mine")) == ["cpu/lesson/01_measure.json"]
    kept = json.loads(rec_path(published, "lesson/01_measure.py", base="mine").read_text(encoding="utf-8"))
    assert kept["stdout"][1] == "float32:  3.50 ms per batch (median of 30)"
    data = json.loads((published / "b.json").read_text(encoding="utf-8"))
    assert data["recordings"] == [kept]
    assert "this machine's runs: 1 written to" in capsys.readouterr().err


def test_out_records_into_that_folder_incrementally(tmp_path, runs, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    assert main(tmp_path, "lesson/01_a.py") == 0
    before = recordings(tmp_path)
    runs.clear()

    assert main(tmp_path, "--out", tmp_path / "mine") == 0
    assert runs == [("lesson/01_a.py", "cpu"), ("lesson/02_b.py", "cpu")]  # DIR was empty
    assert sorted(files(tmp_path / "mine")) == ["cpu/lesson/01_a.json", "cpu/lesson/02_b.json"]
    mine = files(tmp_path / "mine")
    runs.clear()

    assert main(tmp_path, "--out", tmp_path / "mine") == 0
    assert runs == [] and files(tmp_path / "mine") == mine
    assert f"nothing to record on cpu: 2 fresh in {tmp_path / 'mine'}" in capsys.readouterr().err
    assert main(tmp_path, "--check", "--target", "cpu", "--out", tmp_path / "mine") == 0
    assert recordings(tmp_path) == before


def test_out_that_is_a_file_is_a_usage_error(tmp_path, runs, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    (tmp_path / "mine").write_text("")

    assert main(tmp_path, "--out", tmp_path / "mine") == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    assert runs == []


@pytest.mark.parametrize(
    "line, kind, label, value",
    [
        ("float32:  16.70 ms per batch (median of 30)", "timing", "float32", "16.70 ms"),
        (
            "first compiled call: 11.1 s (tracing and code generation)",
            "timing",
            "first compiled call",
            "11.1 s",
        ),
        ("python loop: 78.3 ms (median of 5 runs)", "timing", "python loop", "78.3 ms"),
        ("float16 autocast: 3 ms", "timing", "float16 autocast", "3 ms"),
        (
            "float32   | epoch 0.207 s (median) | first epoch 0.219 s | peak 339 MB",
            "timing",
            "float32 | epoch",
            "0.207 s / 0.219 s",
        ),
        ("bf16 faster than fp32 here: True", "verdict", "bf16 faster than fp32 here", "True"),
        ("float32: 1 + 1e-8 == 1: True", "verdict", "float32: 1 + 1e-8 == 1", "True"),
        ("compiled faster than eager here: False", "verdict", "compiled faster than eager here", "False"),
        ("bf16 vs fp32 here: faster", "verdict", "bf16 vs fp32 here", "faster"),
        ("compiled vs eager here: slower", "verdict", "compiled vs eager here", "slower"),
        (
            "A/A, float32 vs float32 here: within noise",
            "verdict",
            "A/A, float32 vs float32 here",
            "within noise",
        ),
    ],
)
def test_verdict_and_timing_lines_are_labelled_by_the_text_before_them(line, kind, label, value):
    assert list(lines.parse([line]).values()) == [lines.Line(kind, label, value)]


@pytest.mark.parametrize(
    "line",
    [
        "device: cpu, 6 epochs of 16384 samples",
        "speed-up: 84x",
        "7B parameters in float32: 28 GB",
        "float16: 1.0 + 0.0001 = 1 (update lost: True)",
        "bfloat16 time / float32 time: 0.34",
        "True",
    ],
)
def test_other_lines_are_neither_verdicts_nor_timings(line):
    assert lines.parse([line]) == {}


def test_repeated_labels_are_paired_in_order():
    found = lines.parse(["t: 1 ms", "t: 2 ms", "ok: True"])

    assert list(found) == [("timing", "t", 0), ("timing", "t", 1), ("verdict", "ok", 0)]
    assert found[("timing", "t", 1)].value == "2 ms"


# -- 5. help, and the real repository --------------------------------------------------------


def test_help_explains_every_new_option_and_that_fresh_snippets_are_not_re_run(capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(["--help"])
    assert raised.value.code == 0
    text = " ".join(capsys.readouterr().out.split())

    assert "(re-)record" not in text
    assert "a fresh one is not re-run; add --force for that" in text
    options = ("--bundle FILE", "--import FILE", "--allow-stale", "--shard I/N", "--compare", "--out DIR")
    for option in options:
        assert option in text
    assert "importing a bundle twice changes nothing" in text
    assert "exit status: 0 done; 1" in text


def test_shard_list_and_check_on_the_real_repository_never_import_torch():
    code = textwrap.dedent("""
        import sys, time
        sys.path.insert(0, "src")
        from pathlib import Path
        from recorded.cli import main
        started = time.perf_counter()
        argvs = (["--list", "--shard", "1/2"], ["--check", "--shard", "2/2"])
        codes = [main(a, root=Path.cwd()) for a in argvs]
        seconds = time.perf_counter() - started
        assert "torch" not in sys.modules and "numpy" not in sys.modules
        print(codes, round(seconds, 3))
    """)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    codes = done.stdout.splitlines()[-1].rsplit(" ", 1)[0]
    assert codes in ("[0, 0]", "[0, 1]")  # how fast: scripts/bench.py measures it
    assert any(f"shard 1/2 on {name} takes" in done.stderr for name in targets.load(REPO).names), done.stderr


def test_an_interrupted_run_still_writes_the_bundle_of_what_it_finished(tmp_path, monkeypatch, capsys):
    add_snippet(tmp_path, "lesson/01_a.py")
    add_snippet(tmp_path, "lesson/02_b.py")
    real_run = runner.run_snippet

    def second_run_interrupted(snippet, target, timeout, **kw):
        if snippet.name == "lesson/02_b.py":
            raise KeyboardInterrupt
        return real_run(snippet, target, timeout, **kw)

    monkeypatch.setattr(runner, "run_snippet", second_run_interrupted)

    assert main(tmp_path, "--bundle", tmp_path / "b.json") == 130

    data = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert [r["snippet"] for r in data["recordings"]] == ["lesson/01_a.py"]
    assert "interrupted; recordings finished before it are kept" in capsys.readouterr().err


def test_compare_marks_a_run_on_a_busy_machine_and_says_how_many_runs_gave_each_verdict(
    tmp_path, monkeypatch, capsys
):
    from recorded.recorder import busy

    add_snippet(tmp_path, "lesson/01_a.py", 'print("a vs b here: faster")\n', timing=True)
    monkeypatch.setattr(busy, "other_load", lambda *a, **k: (0.6, "fake"))

    assert main(tmp_path, "--compare", "--runs", "2") == 0  # a reader's busy run is shown, marked

    out = capsys.readouterr().out
    assert "lesson/01_a.py: ok here, 2 runs," in out and "busy: other work used up to 60% of the CPUs" in out
    assert "a vs b here faster 2/2" in [" ".join(line.split()) for line in out.splitlines()]
