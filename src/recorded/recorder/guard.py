"""What a snippet's run changed in the project: the second line, behind the sandbox.

Standard library only. The recorder keeps every byte of the snippets and the stores, and the size
and times of every other file. A run that changed anything is refused and the stores put back.
Unsandboxed, ``.git`` and the build's ``.cache`` are watched too: a changed cache is removed (so
nothing a snippet put there is rendered or run); a changed ``.git`` cannot be put back, so it is
named, for the user to check."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Folders of tools, not of the project: caches, environments, builds, version control.
_CACHES = {".cache", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"}
TOOLS = frozenset({".git", ".venv", "venv", "site", "node_modules", "build", *_CACHES})

#: What an unsandboxed run could turn against the user: git's hooks and the build's caches.
WATCHED_UNSANDBOXED = frozenset({".git", ".cache"})


@dataclass(frozen=True)
class Snapshot:
    root: Path
    kept: dict[Path, bytes]  #: every file of the snippets and the stores, by path
    #: (size, mtime_ns, ctime_ns) of every other file: the change time, which no program can
    #: set back, catches an edit that kept the size and put the modification time back.
    seen: dict[Path, tuple[int, int, int]]


def _files(folder: Path, tools: frozenset[str], skip: frozenset[Path] = frozenset()) -> list[Path]:
    found = []
    for top, dirs, files in os.walk(folder):
        here = Path(top)
        dirs[:] = [d for d in dirs if d not in tools and not d.endswith(".egg-info") and here / d not in skip]
        found += [here / f for f in files]
    return found


def take(root: Path, kept: list[Path], sandboxed: bool = True) -> Snapshot:
    """The project under ``root`` now: the folders in ``kept`` byte for byte, the rest by size and
    time; not the tools' folders (but ``.git`` and ``.cache`` when not ``sandboxed``)."""
    tools = TOOLS if sandboxed else TOOLS - WATCHED_UNSANDBOXED
    root, folders = Path(root).resolve(), [Path(k).resolve() for k in kept]
    contents: dict[Path, bytes] = {}
    for path in (p for folder in folders for p in _files(folder, tools)):
        with contextlib.suppress(OSError):  # a file gone meanwhile is simply not kept
            contents[path] = path.read_bytes()
    seen: dict[Path, tuple[int, int, int]] = {}
    for path in _files(root, tools, frozenset(folders)):
        with contextlib.suppress(OSError):
            st = path.lstat()
            seen[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return Snapshot(root, contents, seen)


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """Every file that differs, as ``path (added|removed|changed)``, relative to the project."""
    return [
        f"{p.relative_to(before.root).as_posix() if p.is_relative_to(before.root) else p} ({how})"
        for p, how in _diff(before.kept, after.kept) + _diff(before.seen, after.seen)
    ]


def _diff(old: Mapping[Path, object], new: Mapping[Path, object]) -> list[tuple[Path, str]]:
    return [
        (path, "added" if path not in old else "removed" if path not in new else "changed")
        for path in sorted(old.keys() | new.keys())
        if old.get(path) != new.get(path)
    ]


def restore(before: Snapshot, after: Snapshot) -> list[str]:
    """Put the kept folders back, remove the build's caches if they changed; what else was done, in words."""
    done = []
    cache = before.root / ".cache"
    if any(p.is_relative_to(cache) for p, _ in _diff(before.seen, after.seen)):
        shutil.rmtree(cache, ignore_errors=True)
        done.append(".cache/ was removed: the build makes its caches again")
    for path in after.kept.keys() - before.kept.keys():
        path.unlink(missing_ok=True)
    for path, data in before.kept.items():
        if after.kept.get(path) != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return done
