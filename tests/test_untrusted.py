"""Every snippet and every bundle is untrusted: nothing injected, nothing forged, nothing left
running, nothing lost, and one clear line to the user. One test (or a few) per fault class,
each with a payload of its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes import FAKE_MACHINE
from processes import gone_soon, recorder, started
from projects import Project
from recorded import cli
from recorded.model.machines import Machine
from recorded.model.store import Recording, Store, WriteFailed, write_atomically
from recorded.recorder import admit, bundles

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux process behaviour")

#: Shaped like a verdict line, so it lands in the machine table too.
SCRIPT = "<script>alert('verdict')</script>: True"
#: A terminal's window title, an erased line, NUL, BEL, and a right-to-left override.
CONTROL = "\x1b]0;owned\x07title \x1b[2Kgone\x00nul\x07bel \u202eevil"
RAW = ("\x1b", "\x00", "\x07", "\u202e")
PAGE = "# P\n\n/// recorded | lesson/a.py\n///\n\n/// machine-table\n///\n\n/// recordings\n///\n"


def no_raw_control(text: str) -> bool:
    return not any(c in text for c in RAW)


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path / "project")


# -- markup and control characters from a recording or a bundle ----------------------------------


def test_a_printed_script_tag_is_text_on_every_generated_page(project, fake_machine):
    project.snippet("lesson/a.py", f"print({SCRIPT!r})\nprint({CONTROL!r})\n")
    assert project.record("--target", "cpu") == 0

    html = project.render(PAGE)

    assert "<script>" not in html
    assert html.count("&lt;script&gt;alert(") >= 2  # the output, and the verdict table's row
    assert no_raw_control(html)
    assert "\\x1b]0;owned\\x07title" in html and "\\u202eevil" in html  # shown, as escapes


def test_a_bundles_machine_fields_are_text_on_the_recordings_and_machines_pages(project, tmp_path):
    snippet = project.snippet("lesson/a.py", 'print("x: True")\n')
    machine = dict(
        FAKE_MACHINE,
        cpu={"model": "<img src=x onerror=alert(1)>", "arch": "x86_64", "cores": 2, "features": []},
        torch="<b>2</b>\x1b[31m",
        os="<iframe>",
    )
    rec = Recording(
        snippet.name,
        "cpu",
        snippet.sha256(),
        "ok",
        0,
        ["x: True"],
        [],
        0.1,
        "2026-01-02T03:04:05Z",
        Machine(machine),
    )
    bundle = bundles.write_bundle(tmp_path / "b.json", [rec])
    assert project.record("--import", bundle) == 0

    html = project.render(PAGE)

    assert "<img" not in html and "<b>2" not in html and "<iframe>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert no_raw_control(html)


def test_control_characters_reach_no_terminal_in_compare_list_check_or_import(project, tmp_path, capsys):
    snippet = project.snippet("lesson/a.py", f"print({CONTROL!r} + ' 1.0 ms')\nprint('a: True')\n")
    project.recording(snippet, "cpu", [CONTROL + " 2.0 ms", "a: True"])
    rec = Store(project.root).read(snippet.name, "cpu")
    assert rec is not None
    rec.machine = Machine(FAKE_MACHINE, cpu={"model": "\x1b]0;cpu\x07", "cores": 2, "features": []})
    rec.stdout = [CONTROL]
    bundle = bundles.write_bundle(tmp_path / "b.json", [rec])

    for argv in (["--compare", "--target", "cpu"], ["--list"], ["--check"], ["--import", str(bundle)]):
        project.record(*argv)
        out, err = capsys.readouterr()
        assert no_raw_control(out + err), argv
    project.record("--compare", "--target", "cpu")
    assert "\\x1b]0;owned\\x07title" in capsys.readouterr().out


# -- a run cannot change the repository --------------------------------------------------------

FORGER = """
import json, pathlib, sys
victim = pathlib.Path({path!r})
data = json.loads(victim.read_text())
data["stdout"] = ["forged: True"]  # its sha256 kept, so the forgery would look fresh
victim.write_text(json.dumps(data))
pathlib.Path({planted!r}).write_text("planted")
print("innocent")
"""


def test_a_run_that_rewrites_another_recording_is_refused_and_the_store_put_back(
    project, fake_machine, capsys
):
    victim = project.snippet("lesson/a.py", 'print("honest: True")\n')
    project.recording(victim, "cpu", ["honest: True"], machine=FAKE_MACHINE)
    path = project.store.path(victim.name, "cpu")
    before = path.read_bytes()
    project.page("index.md", "# Home\n")
    planted = project.root / "docs" / "planted.md"
    project.snippet("lesson/b.py", FORGER.format(path=str(path), planted=str(planted)))

    assert project.record("--target", "cpu", "lesson/b.py") == 1

    err = capsys.readouterr().err
    assert re.search(
        r"refused: the run changed files in the project \(.*recordings/cpu/lesson/a\.json \(changed\)", err
    )
    assert "docs/planted.md (added)" in err
    assert path.read_bytes() == before  # put back
    assert project.store.read("lesson/b.py", "cpu") is None  # nothing it printed is kept
    assert project.record("--check") == 0 or "lesson/a.py on cpu" not in capsys.readouterr().out


# -- no process outlives its run ---------------------------------------------------------------

DAEMON = """
import os, sys, time
print("before the daemon", flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # a grandchild in a session of its own, holding stdout open
        open({pidfile!r}, "w").write(str(os.getpid()))
        time.sleep(120)
    os._exit(0)
while not os.path.exists({pidfile!r}):
    time.sleep(0.01)
print("after the daemon")
"""


@LINUX
def test_a_daemon_that_escapes_into_its_own_session_is_ended_and_the_output_kept(
    project, fake_machine, tmp_path_factory
):
    pidfile = tmp_path_factory.mktemp("pids") / "daemon.pid"
    project.snippet("lesson/a.py", DAEMON.format(pidfile=str(pidfile)))
    started = time.monotonic()

    assert project.record("--target", "cpu") == 0

    assert time.monotonic() - started < 20  # the held pipe did not keep the recorder waiting
    rec = project.store.read("lesson/a.py", "cpu")
    assert rec is not None and rec.stdout == ["before the daemon", "after the daemon"]
    assert gone_soon(int(pidfile.read_text())), "the daemon outlived the run"


HANGS = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(60)"])
open(os.environ["PIDFILE"], "w").write(str(child.pid))
time.sleep(60)
"""


@LINUX
def test_sigterm_ends_the_run_cleanly_keeps_what_finished_and_writes_the_bundle(tmp_path):
    project = Project(tmp_path / "p")
    project.snippet("lesson/a_fast.py", 'print("done")\n')
    project.snippet("lesson/b_hangs.py", HANGS)
    tmpdir, pidfile, bundle = tmp_path / "tmp", tmp_path / "child.pid", tmp_path / "b.json"
    tmpdir.mkdir()
    proc = recorder(project.root, "--bundle", str(bundle), tmpdir=tmpdir, env={"PIDFILE": str(pidfile)})
    assert started(pidfile), "the hanging snippet never started"

    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)

    assert proc.returncode == 143, err
    said = [line for line in err.splitlines() if "SIGTERM" in line]
    assert len(said) == 1 and "recordings finished before it are kept (1)" in said[0]
    assert [r["snippet"] for r in json.loads(bundle.read_text())["recordings"]] == ["lesson/a_fast.py"]
    assert project.store.read("lesson/b_hangs.py", "cpu") is None
    assert not list(tmpdir.iterdir()), "a run's temporary folder was left behind"
    assert gone_soon(int(pidfile.read_text()), 5), "the snippet's child outlived the run"


# -- bundles are bounded ---------------------------------------------------------------------------


def test_a_bundle_over_the_size_limit_is_refused_before_it_is_read(project, tmp_path, capsys):
    project.snippet("lesson/a.py")
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(200_000_000)  # sparse: 200 MB on paper, nothing on disk

    assert project.record("--import", str(big)) == 1

    out = capsys.readouterr().out
    assert "200.0 MB, over the 16 MB a bundle may be" in out and "--max-bundle-mb 200" in out
    assert not (project.root / "recordings").exists()


def test_a_bundle_recording_larger_than_a_run_keeps_is_refused(project, tmp_path, capsys):
    snippet = project.snippet("lesson/a.py")
    rec = Recording(
        snippet.name, "cpu", snippet.sha256(), "ok", 0, ["x" * 2_000_000], [], 0.1, "2026-01-02T03:04:05Z",
        Machine(FAKE_MACHINE),
    )  # fmt: skip
    bundle = bundles.write_bundle(tmp_path / "b.json", [rec])

    assert project.record("--import", str(bundle), "--max-bundle-mb", "50") == 1

    assert "its stdout holds 2,000,001 characters" in capsys.readouterr().out
    assert not (project.root / "recordings").exists()


def test_deeply_nested_json_is_one_line_naming_the_file(project, tmp_path, capsys):
    project.snippet("lesson/a.py")
    nested = tmp_path / "nested.json"
    nested.write_text('{"bundle": 1, "machine": ' + "[" * 200_000 + "]" * 200_000 + "}")

    assert project.record("--import", str(nested)) == 1

    out = capsys.readouterr().out
    refused = [line for line in out.splitlines() if "nested too deeply" in line]
    assert len(refused) == 1 and str(nested) in refused[0]
    assert "Traceback" not in out


# -- writes fail cleanly ----------------------------------------------------------------------------


@LINUX
def test_a_file_size_limit_while_writing_is_one_line_and_the_good_recording_stays(tmp_path):
    project = Project(tmp_path / "p")
    project.snippet("lesson/a.py", 'print("old " * 1000)\n')
    src = str(Path(__file__).resolve().parents[1] / "src")

    def recorder_with(limit: str) -> subprocess.CompletedProcess:
        code = f"{limit}import sys; from recorded.cli import main; sys.exit(main(sys.argv[2:], root=sys.argv[1]))"
        return subprocess.run(
            [sys.executable, "-c", code, str(project.root), "--target", "cpu"],
            env=dict(os.environ, PYTHONPATH=src),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert recorder_with("").returncode == 0
    path = project.store.path("lesson/a.py", "cpu")
    good = path.read_bytes()
    project.snippet("lesson/a.py", 'print("new " * 1000)\n')

    done = recorder_with("import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000)); ")

    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(r"a\.json: could not be written \(File too large\)", done.stderr)
    assert path.read_bytes() == good
    assert not list(path.parent.glob("*.tmp"))


def test_a_full_disk_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(WriteFailed, match=r"r\.json: could not be written \(No space left on device\)"):
        write_atomically(path, "new")
    assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]


def test_recordings_get_the_umasks_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "r.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644


def test_two_imports_of_one_recording_at_once_take_turns(tmp_path):
    project = Project(tmp_path / "p")
    snippet = project.snippet("lesson/a.py")
    rec = Recording(
        snippet.name, "cpu", snippet.sha256(), "ok", 0, ["hello"], [], 0.1, "2026-01-02T03:04:05Z",
        Machine(FAKE_MACHINE),
    )  # fmt: skip
    bundle = bundles.write_bundle(tmp_path / "b.json", [rec])
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()

    procs = [recorder(project.root, "--import", str(bundle), tmpdir=tmpdir) for _ in range(2)]
    outs = [p.communicate(timeout=60)[0] for p in procs]

    actions = sorted(
        m.group(1) for o in outs for m in re.finditer(r"^  (imported|unchanged) ", o, re.MULTILINE)
    )
    assert actions == ["imported", "unchanged"], outs


# -- the site build ---------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["a link out of snippets/", "bytes that are not text"])
def test_a_bad_snippet_is_a_page_warning_with_its_line_not_a_traceback(project, tmp_path, warnings, how):
    project.snippet("lesson/a.py")
    bad = project.root / "snippets" / "lesson" / "bad.py"
    if how == "a link out of snippets/":
        (tmp_path / "outside.py").write_text("print(1)\n")
        bad.symlink_to(tmp_path / "outside.py")
    else:
        bad.write_bytes(b"print(1)\n\xff\xfe\x00")

    project.render("# P\n\n/// recordings\n///\n\n/// recorded | lesson/bad.py\n///\n")

    said = [w for w in warnings() if "lesson/bad.py" in w]
    assert any(w.startswith("(page):3: ") for w in said), said
    assert any(w.startswith("(page):6: ") for w in said), said


# -- a kind of machine that cannot prove itself --------------------------------------------------

NPU = """
[tool.recorded.targets.cpu]
label = "CPU"
provides = ["cpu"]
description = "the CPU"

[tool.recorded.targets.npu]
label = "NPU"
provides = ["cpu", "npu"]
description = "a made-up NPU"
[tool.recorded.targets.npu.device]
name = "a made-up NPU"
probe = 'import json; print(json.dumps({"name": "NPU 1", "available": False}))'
available = "False"
"""


def test_a_device_with_no_check_of_its_own_must_prove_itself_by_its_available_line(tmp_path, capsys):
    project = Project(tmp_path / "p")
    project.targets(NPU)
    project.snippet("lesson/a.py", "print(1)\n", requires=["npu"])

    assert project.record("--target", "npu") == 2

    assert "its check printed 'False', not 'True'" in capsys.readouterr().err
    assert not (project.root / "recordings").exists()


def test_a_recording_whose_device_was_unavailable_is_refused_on_import_and_by_the_audit(tmp_path, capsys):
    project = Project(tmp_path / "p")
    project.targets(NPU)
    snippet = project.snippet("lesson/a.py", "print(1)\n", requires=["npu"])
    machine = dict(FAKE_MACHINE, gpu={"name": "NPU 1", "available": False}, target={"check": "True"})
    rec = Recording(
        snippet.name,
        "npu",
        snippet.sha256(),
        "ok",
        0,
        ["x"],
        [],
        0.1,
        "2026-01-02T03:04:05Z",
        Machine(machine),
    )
    bundle = bundles.write_bundle(tmp_path / "b.json", [rec])

    assert project.record("--import", str(bundle)) == 1
    assert "its device 'NPU 1' was stored as unavailable" in capsys.readouterr().out

    project.store.write(rec)  # as if committed by hand
    assert any("stored as unavailable" in p for p in admit.audit(project.store))
    assert cli.main(["--check"], root=project.root) == 1
