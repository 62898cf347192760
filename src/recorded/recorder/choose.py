"""Which targets a run takes: those named, every one, or the first auto one this machine can run.

Standard library only; for the recorder and the tests' live runs. A target is looked at (its CPU
flags, then its check, which may import torch) only when something will run on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..config.targets import Target, TargetError, Targets
from ..model import machines
from . import runner

ALL, AUTO = "all", "auto"


class ChoiceError(ValueError):
    """No target can be chosen as asked: an unknown name, or no auto target runs here."""


@dataclass(frozen=True)
class Choice:
    asked: str  # "all", "auto", or the names as given ("cpu,cpu-avx2")
    chosen: tuple[Target, ...]
    #: (target, why this machine cannot run it), in the order they were looked at.
    skipped: tuple[tuple[Target, str], ...] = ()

    @property
    def named(self) -> bool:
        return self.asked not in (ALL, AUTO)

    def why(self) -> str:
        return "; ".join(f"{t.name}: {why}" for t, why in self.skipped)


def named(targets: Targets, asked: str, where: str = "--target") -> tuple[Target, ...]:
    """The targets in ``cpu`` or ``cpu,cpu-avx2``, each once; ChoiceError naming the known ones."""
    try:
        return tuple(dict.fromkeys(targets.get(name.strip(), where) for name in asked.split(",")))
    except TargetError as exc:
        raise ChoiceError(f"{exc} Or use {where} {ALL} or {where} {AUTO}.") from None


def why_not(targets: Targets, target: Target, cheap: bool = False) -> str | None:
    """Why this machine cannot run the target, or None: its CPU flags, then its check; ``cheap``:
    without starting Python, a device's driver on disk (``detect``) instead of the check."""
    if machines.unmet_here(targets, target):
        return machines.why_not_here(targets, target)
    if cheap:
        if target.detected():
            return None
        if not target.detect:
            return f"{target.name} declares no detect, so only its check can prove it: name it with --target"
        return f"none of {', '.join(target.detect)} is on this machine"
    try:
        runner.check(target)
    except runner.TargetCheckFailed as exc:
        return str(exc)
    return None


def choose(
    targets: Targets,
    asked: str | None = None,
    default: str = ALL,
    needed: Callable[[Target], bool] = lambda target: True,
    whole_machines: bool = False,
    where: str = "--target",
) -> Choice:
    """The targets to run on, and why the others were skipped.

    ``asked``: names (``cpu,cpu-avx2``), ``all`` or ``auto`` (the first of ``[tool.recorded] auto``
    this machine can run, else ChoiceError); ``default`` when None. A target nothing will run on
    (``needed``) is not probed (``auto`` takes the cheap look). ``whole_machines`` chooses each
    target's host, if it and all its emulations can run. ``where``: the option that asked."""
    asked = (asked or default).strip()
    by_name = {AUTO: tuple(map(targets.get, targets.auto)), ALL: tuple(targets)}
    candidates = by_name[asked] if asked in by_name else named(targets, asked, where)
    if whole_machines:
        candidates = tuple(dict.fromkeys(targets.host_of(t) for t in candidates))
    chosen: list[Target] = []
    skipped: list[tuple[Target, str]] = []
    for target in candidates:
        if needed(target):
            group = targets.sharing(target) if whole_machines else (target,)
            why = next(filter(None, (why_not(targets, t) for t in group)), None)
        else:
            why = why_not(targets, target, cheap=True) if asked == AUTO else None
        if why:
            skipped.append((target, why))
            continue
        chosen.append(target)
        if asked == AUTO:
            break
    choice = Choice(asked, tuple(chosen), tuple(skipped))
    if asked == AUTO and not chosen:
        option = where.startswith("-")  # on the command line, not the tests' live runs
        raise ChoiceError(
            f"{where + ' ' + AUTO if option else where}: none of the auto targets {list(targets.auto)} "
            f"([tool.recorded] auto in pyproject.toml) can run on this machine"
            + (f" ({choice.why()})" if skipped else "")
            + (f"; name one with {where}." if option else ".")
        )
    return choice
