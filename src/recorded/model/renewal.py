"""Which recordings must be renewed here, the one rule the build, the tests and ``--check`` share.
A missing, stale or failed recording is an error on a target marked ``required``, on every
target under the release rule (``--check --strict``, ``RECORDINGS_STRICT=1``), and where the
person at this machine changed the snippet (git: the working tree against the merge base with
the upstream, else ``origin/HEAD``, else HEAD; new files included), this machine is that kind
and the kind already holds recordings. Anything else is a note, shown as it is until a machine
of its kind renews it, so a fresh clone passes on any machine. Standard library only."""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..config.targets import Target, Targets
from . import machines

#: The variable the tests set to take this machine for other kinds (``kinds_here``).
KINDS_HERE = "RECORDED_KINDS_HERE"


@dataclass(frozen=True)
class Renewal:
    strict: bool = False
    here: frozenset[str] = frozenset()  #: the kinds this machine is
    recorded: frozenset[str] = frozenset()  #: the kinds that hold any recording
    #: The snippets changed in this working tree; None: asked of git in ``root`` when first
    #: needed, so a build whose recordings are all fresh never starts git.
    changed: frozenset[str] | None = None
    root: Path | None = None

    def yours(self, target: Target, snippet: str) -> bool:
        """Whether the person at this machine changed the snippet and can renew this kind."""
        return target.name in self.here and target.name in self.recorded and snippet in self._changed

    @functools.cached_property
    def _changed(self) -> frozenset[str]:
        if self.changed is not None:
            return self.changed
        return changed_snippets(self.root) if self.root is not None else frozenset()

    def why(self, target: Target, snippet: str) -> str:
        """Why a missing, stale or failed recording of ``snippet`` on ``target`` is an error, in
        words; "" where it is only a note."""
        if self.yours(target, snippet):
            return f"{snippet} changed here and this machine is {target.name}"
        if target.required:
            return f"{target.name} is marked required"
        return "the release rule (--strict)" if self.strict else ""


def of(store, strict: bool) -> Renewal:
    """The rule for the project of ``store`` (a model.store.Store) on this machine."""
    recorded = frozenset(t for t in store.targets.names if any((store.recordings_dir / t).rglob("*.json")))
    return Renewal(strict, frozenset(kinds_here(store.targets)), recorded, root=store.root)


def kinds_here(targets: Targets) -> list[str]:
    """The kinds this machine is, or those ``RECORDED_KINDS_HERE`` names (comma-separated; empty:
    none) where the tests take it for others. The recorder ignores it: it looks at the real machine."""
    named = os.environ.get(KINDS_HERE)
    if named is None:
        return machines.targets_here(targets)
    return [t.name for t in targets if t.name in {n.strip() for n in named.split(",")}]


def git(root: Path, *args: str) -> str | None:
    """What ``git args`` prints in ``root``; None where it fails (no git, not a repository)."""
    command = ["git", "-C", str(root), *args]
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")  # reading only: no index refresh written into .git
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def changed_snippets(root: Path) -> frozenset[str]:
    """The snippets changed in this working tree since the commit it started from (none outside git)."""
    if git(root, "rev-parse", "--is-inside-work-tree") is None:
        return frozenset()
    bases = (git(root, "merge-base", "HEAD", upstream) for upstream in ("@{upstream}", "origin/HEAD"))
    base = next((found.strip() for found in bases if found is not None), None)
    if base is None and git(root, "rev-parse", "--verify", "--quiet", "HEAD") is not None:
        base = "HEAD"
    if base is None:  # no commit yet: every snippet is new
        listed = git(root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "snippets")
    else:
        diffed = git(root, "diff", "--relative", "--name-only", "--no-renames", base, "--", "snippets")
        new = git(root, "ls-files", "--others", "--exclude-standard", "--", "snippets")
        listed = None if diffed is None or new is None else diffed + new
    if listed is None:
        return frozenset()
    return frozenset(line.removeprefix("snippets/") for line in listed.splitlines() if line.endswith(".py"))
