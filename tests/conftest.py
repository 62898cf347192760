"""Fixtures shared by the recorder's tests."""

import pytest

from recorded import runner


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
