"""Which recordings must be renewed here, and which wait, shown as they are, for a machine of
their kind.

Standard library only. The one rule the build, the tests and ``--check`` share. A recording
that is missing, stale (of an earlier version of the code) or failed is an error:

- on a target pyproject.toml marks ``required``;
- on every target under the release rule (``strict``: ``--check --strict``,
  ``RECORDINGS_STRICT=1``);
- where the person at this machine can renew it and nobody else will: the snippet is one
  they changed (``changed``), this machine is that kind (``here``) and the kind already
  holds recordings (``recorded``).

Anything else is a note: a fresh clone passes on any machine, a kind nobody has recorded is
"not recorded yet", and an output of an earlier version stays on its tab, labelled, until a
machine of its kind records the code again.

What "changed" means comes from git: the snippets that differ, in the working tree, from the
commit this work started from (the merge base with the branch's upstream, else with
``origin/HEAD``, else HEAD itself), new ones included. In a fresh clone nothing has changed;
outside a git checkout nothing is known to have changed.
"""

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
    """What must be fresh on this machine, in this working tree."""

    strict: bool = False
    here: frozenset[str] = frozenset()  #: the kinds this machine is
    recorded: frozenset[str] = frozenset()  #: the kinds that hold any recording
    #: The snippets changed in this working tree; None: asked of git in ``root`` when first
    #: needed (a build whose recordings are all fresh never starts git).
    changed: frozenset[str] | None = None
    root: Path | None = None

    def must(self, target: Target, snippet: str) -> bool:
        """Whether a missing, stale or failed recording of ``snippet`` on ``target`` is an error."""
        return target.required or self.strict or self.yours(target.name, snippet)

    def yours(self, target: str, snippet: str) -> bool:
        """Whether the person at this machine changed the snippet and can renew this kind."""
        return target in self.here and target in self.recorded and snippet in self._changed

    @functools.cached_property
    def _changed(self) -> frozenset[str]:
        if self.changed is not None:
            return self.changed
        return changed_snippets(self.root) if self.root is not None else frozenset()

    def why(self, target: Target, snippet: str) -> str:
        """Why it must be fresh, in words, for a message; "" when it need not be."""
        if self.yours(target.name, snippet):
            return f"{snippet} changed here and this machine is {target.name}"
        if target.required:
            return f"{target.name} is marked required"
        return "the release rule (--strict)" if self.strict else ""


def of(store, strict: bool) -> Renewal:
    """The rule for the project of ``store`` on this machine (``store`` is a model.store.Store)."""
    return Renewal(
        strict,
        frozenset(kinds_here(store.targets)),
        frozenset(t for t in store.targets.names if any((store.recordings_dir / t).rglob("*.json"))),
        root=store.root,
    )


def kinds_here(targets: Targets) -> list[str]:
    """The kinds this machine is (machines.targets_here), or, where the tests take it for
    others, the kinds ``RECORDED_KINDS_HERE`` names (comma-separated; empty: none, an unknown
    machine). Only what must be fresh and what the pages note follow it: the recorder looks
    at the real machine, and refuses a kind it is not."""
    named = os.environ.get(KINDS_HERE)
    if named is None:
        return machines.targets_here(targets)
    return [t.name for t in targets if t.name in {n.strip() for n in named.split(",")}]


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            # Reading only: no index refresh written into .git by a build or a test.
            env=dict(os.environ, GIT_OPTIONAL_LOCKS="0"),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def changed_snippets(root: Path) -> frozenset[str]:
    """The snippets (names under snippets/) changed in this working tree since the commit it
    started from; empty in a fresh clone and outside a git checkout."""
    if _git(root, "rev-parse", "--is-inside-work-tree") is None:
        return frozenset()
    base = None
    for upstream in ("@{upstream}", "origin/HEAD"):
        if (found := _git(root, "merge-base", "HEAD", upstream)) is not None:
            base = found.strip()
            break
    if base is None and _git(root, "rev-parse", "--verify", "--quiet", "HEAD") is not None:
        base = "HEAD"
    if base is None:  # no commit yet: every snippet is new
        listed = _git(root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "snippets")
    else:
        diffed = _git(root, "diff", "--relative", "--name-only", "--no-renames", base, "--", "snippets")
        new = _git(root, "ls-files", "--others", "--exclude-standard", "--", "snippets")
        listed = None if diffed is None or new is None else diffed + new
    if listed is None:
        return frozenset()
    return frozenset(line.removeprefix("snippets/") for line in listed.splitlines() if line.endswith(".py"))
