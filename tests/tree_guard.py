"""The suite never writes into the repository: the files git sees (tracked, and untracked
but not ignored) are byte for byte the same after the run as before it.

Loaded by the root conftest.py. Under pytest-xdist only the controller looks, once.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BEFORE = pytest.StashKey[dict]()


def snapshot(root: Path = ROOT) -> dict[str, str] | None:
    """sha256 of every file git sees under root, by path; None outside a git checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    found = {}
    for name in filter(None, listed.decode().split("\0")):
        path = root / name
        found[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "(absent)"
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What changed, one ``path (how)`` each."""
    return [
        f"{name} ({'added' if name not in before else 'removed' if name not in after else 'changed'})"
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    ]


def _controller(session: pytest.Session) -> bool:
    return not hasattr(session.config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session) and (before := snapshot()) is not None:
        session.config.stash[BEFORE] = before


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(BEFORE, None)
    if not _controller(session) or before is None:
        return
    changed = changes(before, snapshot() or {})
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the tests changed the repository (a test must change only a temporary copy): " + ", ".join(
            changed
        )
        if reporter:
            reporter.write_line(message, red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
