"""What is wrong with one example on one target: the one rule behind the site's warnings
(pages/example.py) and the tests' failures (checks/sybil.py), as data each words its own way.
A verdict holds only if each run gave it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..config.targets import Target
from . import claims as claims_
from .recording import Recording
from .renewal import Renewal
from .store import WITH_OUTPUT, Standing, State, Store

#: The states a renewal can fix, when it must be fresh.
RENEWABLE = (State.MISSING, State.STALE, State.FAILED)


@dataclass(frozen=True)
class Invalid:
    target: Target
    reason: str  #: why the file cannot be read, naming it


@dataclass(frozen=True)
class MustRenew:
    target: Target
    state: State  #: one of RENEWABLE
    reason: str  #: the store's words for the state
    why: str  #: why it must be fresh here (Renewal.why)
    recording: Recording | None  #: None when missing


@dataclass(frozen=True)
class OtherMachine:
    target: Target  #: the emulated one
    host: Target
    differences: tuple[str, ...]  #: ``key: host's != this one's``


@dataclass(frozen=True)
class Group:
    """One group of claims (``expect``, or a target's own) and the line each matched, or None."""

    claims: tuple[str, ...]
    found: tuple[int | None, ...]

    @property
    def missing(self) -> list[str]:
        return [c for c, i in zip(self.claims, self.found, strict=True) if i is None]


@dataclass(frozen=True)
class NotPrinted:
    target: Target
    nth_run: int  #: which run printed it, 1-based
    run_count: int  #: how many runs the recording holds
    printed: tuple[str, ...]  #: what that run printed
    groups: tuple[Group, ...]  #: every group of claims, at least one with a claim missing

    @property
    def missing(self) -> list[str]:
        return [c for g in self.groups for c in g.missing]

    def nearest(self) -> list[tuple[str, str]]:
        """(claim, the printed line most like it) for each missing claim, if anything was printed."""
        return [(c, n) for c in self.missing if (n := claims_.nearest(c, list(self.printed))) is not None]


Finding = Invalid | MustRenew | OtherMachine | NotPrinted


def of(status: Standing, claims: Sequence[Sequence[str]], store: Store, renewal: Renewal) -> list[Finding]:
    """What is wrong with a snippet's recording on one target, given the example's ``claims_for`` it."""
    target, rec = status.target, status.recording
    if status.state is State.INVALID:
        return [Invalid(target, status.reason)]
    found: list[Finding] = []
    if status.state in RENEWABLE and (why := renewal.why(target, status.snippet.name)):
        found.append(MustRenew(target, status.state, status.reason, why, rec))
    if status.state not in WITH_OUTPUT or rec is None:
        return found
    if target.host is not None:  # an emulated tab is its host's machine, with limits set
        host = store.standing(status.snippet, store.targets[target.host])
        theirs = host.recording
        if host.state in WITH_OUTPUT and theirs is not None and not rec.machine.same_as(theirs.machine):
            found.append(OtherMachine(target, host.target, tuple(theirs.machine.differences(rec.machine))))
    for run, stdout in enumerate(rec.outputs, 1):
        groups = tuple(Group(tuple(g), tuple(claims_.match(list(g), stdout))) for g in claims)
        if any(g.missing for g in groups):
            found.append(NotPrinted(target, run, len(rec.outputs), tuple(stdout), groups))
    return found
