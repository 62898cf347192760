"""Every snippet and every bundle is untrusted: nothing injected, nothing forged, nothing left
running, nothing lost, and one clear line to the user. One test (or a few) per fault class,
each with a payload of its own.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes import FAKE_MACHINE
from processes import WAIT_FOR, gone_soon, marker, recorder, started
from projects import Project, target
from recorded import cli
from recorded.model.files import WriteFailed, write_atomically
from recorded.model.machines import Machine
from recorded.model.recording import Ending, Recording
from recorded.model.store import Store
from recorded.recorder import admit, bundles, runner, sandbox

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
        Ending.OK,
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
try:
    victim.write_text(json.dumps(data))
    pathlib.Path({planted!r}).write_text("planted")
except OSError as exc:
    print("refused:", exc.strerror)
print("innocent")
"""


def forger(project: Project) -> tuple[Path, bytes, Path]:
    """A snippet that rewrites another snippet's recording and plants a page."""
    victim = project.snippet("lesson/a.py", 'print("honest: True")\n')
    project.recording(victim, "cpu", ["honest: True"], machine=FAKE_MACHINE)
    path = project.store.path(victim.name, "cpu")
    project.page("index.md", "# Home\n")
    planted = project.root / "docs" / "planted.md"
    project.snippet("lesson/b.py", FORGER.format(path=str(path), planted=str(planted)))
    return path, path.read_bytes(), planted


def test_a_run_that_writes_into_the_project_meets_a_read_only_tree(project, fake_machine):
    path, before, planted = forger(project)

    assert project.record("--target", "cpu", "lesson/b.py") == 0

    rec = project.store.read("lesson/b.py", "cpu")
    assert rec is not None and rec.stdout == ["refused: Read-only file system", "innocent"]
    assert path.read_bytes() == before and not planted.exists()


def test_unsandboxed_a_run_that_rewrites_another_recording_is_refused_and_the_store_put_back(
    project, fake_machine, unsandboxed, capsys
):
    # The tree check is the second line: where runs were accepted without the sandbox, a run
    # that changed the project is refused, and the stores are put back byte for byte.
    path, before, _ = forger(project)

    assert project.record("--target", "cpu", "lesson/b.py") == 1

    err = capsys.readouterr().err
    assert re.search(
        r"refused: the run changed files in the project \(.*recordings/cpu/lesson/a\.json \(changed\)", err
    )
    assert "docs/planted.md (added)" in err
    assert path.read_bytes() == before  # put back
    assert project.store.read("lesson/b.py", "cpu") is None  # nothing it printed is kept


# -- the sandbox: the attacks that got through the tree check alone ------------------------------

#: One snippet that tries each write a hostile run made: a git hook that runs at the next
#: checkout, the build's caches (a notebook page rendered as it is, Jinja bytecode it runs),
#: a page edited to the same size with its time put back, and a file in the shared /tmp.
WRITES = """
import os, pathlib, time
root = pathlib.Path({root!r})
page = root / "docs" / "index.md"
def attempt(name, write):
    try:
        write()
        print(name + ": written")
    except OSError as exc:
        print(name + ": " + exc.strerror)
attempt("git hook", lambda: (root / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\\ntouch owned\\n"))
attempt("notebook page cache", lambda: (root / ".cache" / "notebook-pages" / "x.json").write_text('{{"content": "<script>"}}'))
attempt("template cache", lambda: (root / ".cache" / "jinja" / "__jinja2_x.cache").write_bytes(b"pickle"))
stat = page.stat()
def same_size():
    page.write_text(page.read_text().replace("Home", "Hxme"))
    os.utime(page, ns=(stat.st_atime_ns, stat.st_mtime_ns))
attempt("page", same_size)
attempt("shared tmp", lambda: pathlib.Path("/tmp", {mark!r}).write_text("x" * 1000))
"""


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def hostile(project: Project) -> str:
    """The project with a .git, build caches and a page, and the WRITES snippet; its mark."""
    project.page("index.md", "# Home\n")
    for folder in (".git/hooks", ".cache/notebook-pages", ".cache/jinja"):
        (project.root / folder).mkdir(parents=True)
    (project.root / ".cache" / "notebook-pages" / "x.json").write_text('{"content": "<p>lesson</p>"}')
    mark = marker()
    project.snippet("lesson/w.py", WRITES.format(root=str(project.root), mark=mark))
    return mark


@LINUX
def test_a_run_writes_nowhere_but_its_own_folders(project, fake_machine):
    mark = hostile(project)
    before = tree(project.root)

    assert project.record("--target", "cpu") == 0

    rec = project.store.read("lesson/w.py", "cpu")
    assert rec is not None
    assert rec.stdout == [
        "git hook: Read-only file system",
        "notebook page cache: Read-only file system",
        "template cache: Read-only file system",
        "page: Read-only file system",
        "shared tmp: Read-only file system",
    ]
    after = tree(project.root)
    assert {k: v for k, v in after.items() if not k.startswith("recordings/")} == before
    assert not Path("/tmp", mark).exists()


def test_a_compile_cache_not_made_yet_is_made_for_the_run_and_written_there(project, tmp_path):
    # A fresh clone has no .pytest_cache/compile-cache: the sandbox can bind only what exists.
    writes = (
        "import os, pathlib\nhere = pathlib.Path(os.environ['TORCHINDUCTOR_CACHE_DIR'])\n"
        "here.mkdir()\n(here / 'x').write_text('1')\nprint('ok')\n"
    )
    snippet = project.snippet("lesson/c.py", writes)
    cache = tmp_path / "fresh clone" / ".pytest_cache" / "compile-cache"

    done = runner.run_snippet(snippet, project.store.targets.get("cpu"), 60, compile_cache=cache)

    assert (done.status, done.stdout) == ("ok", ["ok"]), done.stderr
    assert (cache / "torchinductor-cache" / "x").read_text() == "1"


@LINUX
def test_unsandboxed_a_run_that_writes_git_or_the_caches_is_refused_and_the_caches_removed(
    project, fake_machine, unsandboxed, capsys
):
    hostile(project)

    assert project.record("--target", "cpu") == 1

    err = capsys.readouterr().err
    assert ".git/hooks/post-checkout (added)" in err and "docs/index.md (changed)" in err
    assert ".cache/ was removed: the build makes its caches again" in err
    assert not (project.root / ".cache").exists()  # never rendered nor run
    assert project.store.read("lesson/w.py", "cpu") is None


@LINUX
def test_the_network_is_out_of_reach(project, fake_machine):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    project.snippet(
        "lesson/n.py",
        f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5)
    print("connected")
except OSError as exc:
    print("refused:", type(exc).__name__)
""",
    )
    try:
        assert project.record("--target", "cpu") == 0
    finally:
        server.close()
    rec = project.store.read("lesson/n.py", "cpu")
    assert rec is not None and rec.stdout == ["refused: ConnectionRefusedError"]  # its own loopback


@LINUX
def test_memory_and_file_sizes_are_bounded_by_the_settings(project, fake_machine):
    project.targets("[tool.recorded]\nmemory-gib = 0.5\nfile-size-mib = 1\n")
    project.snippet(
        "lesson/m.py",
        """
import tempfile
try:
    block = bytearray(1 << 30)
    print("allocated a GiB")
except MemoryError:
    print("memory: refused")
try:
    with tempfile.TemporaryFile() as f:
        f.write(b"x" * (2 << 20))
    print("wrote 2 MiB")
except OSError as exc:
    print("file:", exc.strerror)
""",
    )

    assert project.record("--target", "cpu") == 0

    rec = project.store.read("lesson/m.py", "cpu")
    assert rec is not None and rec.stdout == ["memory: refused", "file: File too large"]


GRANDCHILD = """
import os, signal, subprocess, sys
code = "import os, signal, time\\nfor pid in (os.getppid(), 1):\\n    try:\\n        os.kill(pid, signal.SIGKILL)\\n    except OSError:\\n        pass\\ntime.sleep(6)\\nopen({path!r}, 'w').write('forged')"
subprocess.Popen([sys.executable, "-c", code, {mark!r}])
print("started")
"""


@LINUX
def test_a_grandchild_that_kills_what_it_can_dies_with_the_run(project, fake_machine):
    victim = project.snippet("lesson/a.py", 'print("honest")\n')
    project.recording(victim, "cpu", ["honest"], machine=FAKE_MACHINE)
    path = project.store.path(victim.name, "cpu")
    before = path.read_bytes()
    mark = marker()
    project.snippet("lesson/g.py", GRANDCHILD.format(path=str(path), mark=mark))

    project.record("--target", "cpu", "lesson/g.py")

    assert gone_soon(mark, within=5), "a process of the run outlived it"
    assert path.read_bytes() == before  # and with the grandchild gone, nothing is left to write it


@LINUX
def test_a_run_that_swaps_its_folder_for_a_link_ends_in_a_recording_not_a_traceback(
    project, fake_machine, capsys
):
    project.snippet(
        "lesson/s.py",
        """
import os, pathlib
here = pathlib.Path.cwd()
try:
    os.rename(here, str(here) + ".moved")
    os.symlink("/", here)
    print("swapped")
except OSError as exc:
    print("refused:", exc.strerror)
""",
    )

    assert project.record("--target", "cpu") == 0

    assert "Traceback" not in capsys.readouterr().err
    rec = project.store.read("lesson/s.py", "cpu")
    assert rec is not None and rec.stdout[0].startswith("refused:")


@LINUX
def test_a_run_whose_recorder_died_before_the_sandbox_took_hold_never_starts(tmp_path):
    # The limits' prelude ties the run to its starter; one whose starter is already gone (here:
    # it names a pid that is not its parent) exits before it becomes the run.
    ran = tmp_path / "ran"
    argv = sandbox.Limits().around(sys.executable, [sys.executable, "-c", f"open({str(ran)!r}, 'w')"])
    argv[argv.index(str(os.getpid()))] = "1"

    assert subprocess.run(argv, check=False).returncode == 137
    assert not ran.exists()
    argv[argv.index("1")] = str(os.getpid())
    assert (
        subprocess.run(argv, check=False).returncode == 0 and ran.exists()
    )  # and one whose starter lives runs


@LINUX
def test_folders_a_recorder_killed_by_sigkill_left_are_removed_by_the_next(tmp_path):
    project = Project(tmp_path / "p")
    mark = marker()
    project.snippet(f"lesson/hangs_{mark}.py", "import time\ntime.sleep(60)\n")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = recorder(project.root, tmpdir=tmpdir)
    assert started(mark, script=True)
    proc.kill()
    proc.communicate(timeout=30)
    assert gone_soon(mark, within=5)
    assert list(tmpdir.glob("record-runs-*"))  # SIGKILL: nothing could remove them

    project.snippet(f"lesson/hangs_{mark}.py", 'print("quick")\n')
    done = recorder(project.root, tmpdir=tmpdir)
    done.communicate(timeout=120)

    assert done.returncode == 0 and not list(tmpdir.iterdir())


def test_where_the_sandbox_cannot_run_nothing_runs_unless_accepted(
    project, fake_machine, monkeypatch, capsys
):
    project.snippet("lesson/a.py", 'print("ran")\n')
    monkeypatch.setattr(sandbox, "why_not", lambda: "bubblewrap cannot make a sandbox here (a test)")
    monkeypatch.delenv(sandbox.ALLOW_UNSANDBOXED, raising=False)

    assert project.record("--target", "cpu") == 2

    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "snippets run in a sandbox, and bubblewrap cannot make a sandbox here" in err[0]
    assert "--allow-unsandboxed" in err[0] and project.store.read("lesson/a.py", "cpu") is None

    assert project.record("--target", "cpu", "--allow-unsandboxed") == 0
    rec = project.store.read("lesson/a.py", "cpu")
    assert rec is not None and rec.stdout == ["ran"]
    assert sandbox.ALLOW_UNSANDBOXED not in os.environ  # accepted for that command only


# -- no process outlives its run ---------------------------------------------------------------

DAEMON = """
import os, sys, time
print("before the daemon", flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # a grandchild in a session of its own, holding stdout open
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", {mark!r}])
    os._exit(0)
{wait}
print("after the daemon")
"""


@LINUX
@pytest.mark.parametrize("contained", ["sandboxed", "unsandboxed"])
def test_a_daemon_that_escapes_into_its_own_session_is_ended_and_the_output_kept(
    project, fake_machine, request, contained
):
    if contained == "unsandboxed":  # the supervisor, where the sandbox cannot run
        request.getfixturevalue("unsandboxed")
    mark = marker()
    project.snippet("lesson/a.py", DAEMON.format(mark=mark, wait=WAIT_FOR.format(mark=mark)))
    started_at = time.monotonic()

    assert project.record("--target", "cpu") == 0

    assert time.monotonic() - started_at < 20  # the held pipe did not keep the recorder waiting
    rec = project.store.read("lesson/a.py", "cpu")
    assert rec is not None and rec.stdout == ["before the daemon", "after the daemon"]
    assert gone_soon(mark), "the daemon outlived the run"


HANGS = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(60)", {mark!r}])
time.sleep(60)
"""


@LINUX
def test_sigterm_ends_the_run_cleanly_keeps_what_finished_and_writes_the_bundle(tmp_path):
    project = Project(tmp_path / "p")
    mark = marker()
    project.snippet("lesson/a_fast.py", 'print("done")\n')
    project.snippet("lesson/b_hangs.py", HANGS.format(mark=mark))
    tmpdir, bundle = tmp_path / "tmp", tmp_path / "b.json"
    tmpdir.mkdir()
    proc = recorder(project.root, "--bundle", str(bundle), tmpdir=tmpdir)
    assert started(mark, alone=True), "the hanging snippet's child never left for a session of its own"

    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)

    assert proc.returncode == 143, err
    said = [line for line in err.splitlines() if "SIGTERM" in line]
    assert len(said) == 1 and "recordings finished before it are kept (1)" in said[0]
    assert [r["snippet"] for r in json.loads(bundle.read_text())["recordings"]] == ["lesson/a_fast.py"]
    assert project.store.read("lesson/b_hangs.py", "cpu") is None
    assert not list(tmpdir.iterdir()), "a run's temporary folder was left behind"
    assert gone_soon(mark, 5), "the snippet's child outlived the run"


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
        snippet.name, "cpu", snippet.sha256(), Ending.OK, 0, ["x" * 2_000_000], [], 0.1, "2026-01-02T03:04:05Z",
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


def a_bundle(project: Project, path: Path, **machine) -> Path:
    """A bundle of one good recording of lesson/a.py, its machine changed as given."""
    snippet = project.snippet("lesson/a.py")
    rec = Recording(
        snippet.name, "cpu", snippet.sha256(), Ending.OK, 0, ["hello"], [], 0.1, "2026-01-02T03:04:05Z",
        Machine({**FAKE_MACHINE, **machine}),
    )  # fmt: skip
    return bundles.write_bundle(path, [rec])


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (
            lambda text: text.replace('"duration_s": 0.1', '"duration_s": ' + "9" * 5000),
            "an integer of 5000 digits",
        ),
        (lambda text: text.replace('"duration_s": 0.1', '"duration_s": 1e999'), "the number 1e999 is beyond"),
        (
            lambda text: text.replace('"duration_s": 0.1', '"duration_s": Infinity'),
            "Infinity is not a number",
        ),
        (lambda text: text.replace('"duration_s": 0.1', '"duration_s": NaN'), "NaN is not a number"),
        (
            lambda text: text.replace('"exit_code": 0,', '"exit_code": 0, "exit_code": 1,'),
            "'exit_code' appears twice",
        ),
    ],
    ids=["huge-integer", "huge-float", "infinity", "nan", "duplicate-key"],
)
def test_json_a_recording_may_not_hold_is_refused_in_one_line(project, tmp_path, capsys, damage, said):
    bundle = a_bundle(project, tmp_path / "b.json")
    bundle.write_text(damage(bundle.read_text()))

    assert project.record("--import", str(bundle)) == 1

    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and str(bundle) in out[0] and said in out[0], out  # the refusal, and the count
    assert not (project.root / "recordings").exists()


def test_a_machine_description_is_bounded_like_an_output(project, tmp_path, capsys):
    cpu = dict(Machine(FAKE_MACHINE).cpu, model="X" * 1_600_000)
    bundle = a_bundle(project, tmp_path / "b.json", cpu=cpu)

    assert project.record("--import", str(bundle)) == 1

    assert "its machine description holds 1,600," in capsys.readouterr().out
    assert not (project.root / "recordings").exists()


def test_a_name_in_a_bundle_cannot_break_a_report_line(project, tmp_path, capsys):
    bundle = a_bundle(project, tmp_path / "b.json")
    data = json.loads(bundle.read_text())
    data["recordings"][0]["snippet"] = "lesson/a.py\n  imported     lesson/forged.py on cpu"
    data["recordings_sha256"] = bundles.digest(data["recordings"])
    bundle.write_text(json.dumps(data))

    assert project.record("--import", str(bundle)) == 1

    out = capsys.readouterr().out.splitlines()
    assert not any(line.lstrip().startswith("imported") for line in out)
    assert any("\\n  imported     lesson/forged.py" in line for line in out)


def test_a_refusal_of_thousands_of_recordings_fits_a_screen(project, tmp_path, capsys):
    bundle = a_bundle(project, tmp_path / "b.json")
    data = json.loads(bundle.read_text())
    one = data["recordings"][0]
    data["recordings"] = [dict(one, snippet=f"lesson/nope_{n}.py") for n in range(8000)]
    data["recordings_sha256"] = bundles.digest(data["recordings"])
    bundle.write_text(json.dumps(data))

    assert project.record("--import", str(bundle), "--max-bundle-mb", "100") == 1

    out = capsys.readouterr().out.splitlines()
    assert len(out) <= 25 and "… and 7980 more recordings (7980 of them refused)" in out[-2]


# -- recordings are files in the tree -----------------------------------------------------------


@pytest.mark.parametrize("linked", ["recording", "recordings folder"])
def test_a_recording_behind_a_symlink_is_refused_naming_it(project, tmp_path, warnings, capsys, linked):
    snippet = project.snippet("lesson/a.py", 'print("hello")\n')
    project.recording(snippet, "cpu", ["hello"])
    path = project.store.path(snippet.name, "cpu")
    outside = tmp_path / "outside"
    if linked == "recording":  # an identical file, outside the tree
        outside.mkdir()
        (outside / "a.json").write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(outside / "a.json")
        named = "recordings/cpu/lesson/a.json"
    else:
        (project.root / "recordings").rename(outside)
        (project.root / "recordings").symlink_to(outside)
        named = "recordings:"

    assert project.record("--check") == 1
    out = capsys.readouterr().out
    assert f"{named}" in out and "is a symbolic link" in out
    html = project.render("# P\n\n/// recorded | lesson/a.py\n///\n")
    assert "is a symbolic link" in html and any("is a symbolic link" in w for w in warnings())


# -- writes fail cleanly ----------------------------------------------------------------------------


@LINUX
@pytest.mark.parametrize(
    ("limit", "said"),
    [
        (3000, r"a\.json: could not be written \(File too large\)"),  # the output makes it 4 kB
        (1000, r"the run's copy of lesson/a\.py could not be written \(File too large\)"),
    ],
    ids=["the recording", "the run's copy"],
)
def test_a_file_size_limit_while_writing_is_one_line_and_the_good_recording_stays(tmp_path, limit, said):
    project = Project(tmp_path / "p")
    project.snippet("lesson/a.py", 'print("old " * 1000)\n')
    src = str(Path(__file__).resolve().parents[2] / "src")

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
    project.snippet("lesson/a.py", 'print("new " * 1000)\n' + "# a long comment\n" * 100)

    done = recorder_with(f"import resource; resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); ")

    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(said, done.stderr)
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
        snippet.name, "cpu", snippet.sha256(), Ending.OK, 0, ["hello"], [], 0.1, "2026-01-02T03:04:05Z",
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

NPU = (
    target("cpu", "CPU", "the CPU"),
    target(
        "npu",
        "NPU",
        "a made-up NPU",
        provides=["cpu", "npu"],
        device={
            "name": "a made-up NPU",
            "probe": 'import json; print(json.dumps({"name": "NPU 1", "available": False}))',
            "available": "False",
        },
    ),
)


def test_a_device_with_no_check_of_its_own_must_prove_itself_by_its_available_line(tmp_path, capsys):
    project = Project(tmp_path / "p")
    project.targets(*NPU)
    project.snippet("lesson/a.py", "print(1)\n", requires=["npu"])

    assert project.record("--target", "npu") == 2

    assert "its check printed 'False', not 'True'" in capsys.readouterr().err
    assert not (project.root / "recordings").exists()


def test_a_recording_whose_device_was_unavailable_is_refused_on_import_and_by_the_audit(tmp_path, capsys):
    project = Project(tmp_path / "p")
    project.targets(*NPU)
    snippet = project.snippet("lesson/a.py", "print(1)\n", requires=["npu"])
    machine = dict(FAKE_MACHINE, gpu={"name": "NPU 1", "available": False}, target={"check": "True"})
    rec = Recording(
        snippet.name,
        "npu",
        snippet.sha256(),
        Ending.OK,
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
