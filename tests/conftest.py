"""Fixtures and settings shared by the tests."""

import pytest
from hypothesis import settings

from recorded import runner

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
