"""Fixtures and settings shared by the tests."""

import sys

import pytest
from fakes import FAKE_GPU, FAKE_MACHINE
from hypothesis import settings

from recorded import provenance, runner

# The property tests check logic, not speed: on a loaded machine (both cores busy with
# live runs) Hypothesis's per-example deadline would fail them for the wrong reason.
settings.register_profile("project", deadline=None)
settings.load_profile("project")


@pytest.fixture
def runs(monkeypatch) -> list[tuple[str, str]]:
    """(snippet name, target) of every run the recorder starts, in order."""
    calls: list[tuple[str, str]] = []
    real_run = runner.run

    def spy(snippet, target, timeout, **kw):
        calls.append((snippet.name, target))
        return real_run(snippet, target, timeout, **kw)

    monkeypatch.setattr(runner, "run", spy)
    return calls


@pytest.fixture
def fake_machine(monkeypatch):
    """A fake machine description (with a fake GPU where one is visible) and no NVIDIA
    driver: fast, and the same on a GPU runner as here. Tests may override either."""
    def machine(root, env, python=sys.executable):
        m = dict(FAKE_MACHINE)
        if env.get("CUDA_VISIBLE_DEVICES") != "":
            m["gpu"] = dict(FAKE_GPU)
        return m

    monkeypatch.setattr(provenance, "machine", machine)
    monkeypatch.setattr(provenance, "nvidia_present", lambda: False)
