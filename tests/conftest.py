"""Fixtures and settings shared by the tests."""

import logging
import sys

import pytest
from hypothesis import settings

from fakes import FAKE_GPU, FAKE_MACHINE
from recorded.config import targets
from recorded.recorder import runner, sandbox, this_machine

# The property tests check logic, not speed: on a loaded machine (both cores busy with
# live runs) Hypothesis's per-example deadline would fail them for the wrong reason.
settings.register_profile("project", deadline=None)
settings.load_profile("project")


@pytest.fixture
def runs(monkeypatch) -> list[tuple[str, str]]:
    """(snippet name, target) of every run the recorder starts, in order."""
    calls: list[tuple[str, str]] = []
    real_run = runner.run_snippet

    def spy(snippet, target, timeout, **kw):
        calls.append((snippet.name, target.name))
        return real_run(snippet, target, timeout, **kw)

    monkeypatch.setattr(runner, "run_snippet", spy)
    return calls


class FakeChecks:
    """Which targets' checks pass on the pretend machine: no GPU unless ``gpu`` is set,
    and every other target as it claims. Set ``failing[name] = "why"`` to fail one."""

    def __init__(self):
        self.gpu = False
        self.failing: dict[str, str] = {}
        self.calls: list[str] = []

    def __call__(self, target, python=sys.executable):
        self.calls.append(target.name)
        if target.name in self.failing:
            raise runner.TargetCheckFailed(self.failing[target.name])
        if target.needs_device and not self.gpu:
            raise runner.TargetCheckFailed("no NVIDIA driver on this machine (a pretend one)")
        return target.check.prints if target.check else None


@pytest.fixture
def fake_machine(monkeypatch) -> FakeChecks:
    """A fake machine description (with a fake GPU where one is visible), and target
    checks that pass for every target but a GPU one: fast, and the same on a GPU runner
    as here. Returns the checks, so a test can give the machine a GPU or fail a target."""

    def machine(root, env, python=sys.executable, device=None):
        m = dict(FAKE_MACHINE)
        if device is not None:  # the target's device, as its probe would describe it
            m["gpu"] = dict(FAKE_GPU)
        return m

    checks = FakeChecks()
    monkeypatch.setattr(this_machine, "machine", machine)
    monkeypatch.setattr(runner, "check", checks)
    monkeypatch.setattr(targets.Target, "detected", lambda self: checks.gpu or not self.needs_device)
    return checks


@pytest.fixture
def unsandboxed(monkeypatch) -> None:
    """A machine where bubblewrap cannot run, with unsandboxed runs accepted: for the tests of
    what only the supervisor and the tree check do, and of runs that share a file on purpose."""
    monkeypatch.setattr(sandbox, "why_not", lambda: "no sandbox here (the test says so)")
    monkeypatch.setenv(sandbox.ALLOW_UNSANDBOXED, "1")


@pytest.fixture
def warnings(caplog):
    """The warnings logged on the mkdocs logger, which `mkdocs build --strict` fails on."""
    caplog.set_level(logging.WARNING, logger="mkdocs")

    def get() -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name.startswith("mkdocs") and r.levelno >= logging.WARNING
        ]

    return get
