"""Machines: the identity a recording stores (one ``Identity`` per target: one tab, one
machine), this machine's CPU, and which kinds of machine (targets) this one is. Standard
library only."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.targets import Requirement, Target, Targets

#: What every recording looked for before recordings said so (``cpu.looked_for``), frozen so
#: that a change to FEATURES cannot rewrite old proofs of a flag's absence.
_X86 = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")
_LOOKED_FOR_BEFORE = (*_X86, "asimd", "asimdhp", "bf16", "sve")  # then Arm's
#: CPU features that decide whether 16-bit arithmetic is fast on a CPU; every recording looks
#: for these, and for the flags the targets' requirements name.
FEATURES = _LOOKED_FOR_BEFORE


@dataclass(frozen=True)
class Identity:
    """What makes two runs the same kind of machine: never load, date or clock."""

    cpu: str | None
    arch: str | None
    cores: int | None
    flags: tuple[str, ...]
    torch: str | None
    device: str | None

    def __str__(self) -> str:
        flags, device = ", ".join(self.flags) or "none", f", GPU {self.device}" if self.device else ""
        return f"{self.cpu} ({self.cores} cores, flags {flags}, torch {self.torch}{device})"


class Machine(Mapping[str, Any]):
    """A recording's ``machine`` block, read typed; the mapping it was stored as, so it is written
    back byte for byte, and read-only: every recording a session makes on a target shares one."""

    def __init__(self, data: Mapping[str, Any] | None = None, **more: Any):
        self._data = {**(data or {}), **more}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Machine({self._data!r})"

    def _block(self, key: str) -> dict[str, Any]:
        return value if isinstance(value := self.get(key), dict) else {}

    @property
    def cpu(self) -> dict[str, Any]:
        """The CPU block: model, arch, cores, features, looked_for."""
        return self._block("cpu")

    @property
    def features(self) -> list[str]:
        """The CPU flags it has, of those looked for."""
        return [f for f in self.cpu.get("features") or [] if isinstance(f, str)]

    @property
    def device(self) -> dict[str, Any] | None:
        """The target's device beyond the CPU, as its probe described it (stored as "gpu")."""
        return value if isinstance(value := self.get("gpu"), dict) and value else None

    @property
    def run_for(self) -> dict[str, Any]:
        """The target it ran for: name, description, env, what its check printed."""
        return self._block("target")

    def version(self, name: str) -> str | None:
        """The version of python, torch or numpy it ran."""
        return str(value) if (value := self.get(name)) else None

    def release(self, name: str) -> str | None:
        """The version without a local build label (torch 2.13.0+cpu ran 2.13.0)."""
        return value.split("+")[0] if (value := self.version(name)) else None

    @property
    def identity(self) -> Identity:
        cpu, flags, device = self.cpu, tuple(sorted(self.features)), (self.device or {}).get("name")
        return Identity(cpu.get("model"), cpu.get("arch"), cpu.get("cores"), flags, self.get("torch"), device)

    def same_as(self, other: Machine) -> bool:
        return self.identity == other.identity

    def differences(self, other: Machine) -> list[str]:
        """What tells two machines apart, as ``key: a != b`` lines (empty when the same)."""
        mine, theirs = self.identity.__dict__, other.identity.__dict__
        return [f"{key}: {mine[key]!r} != {theirs[key]!r}" for key in mine if mine[key] != theirs[key]]

    def unmet(self, requires: Requirement) -> list[str]:
        """Why this machine is not the hardware ``requires`` says, from what it stores."""
        present = set(self.features)
        looked = set(self.cpu.get("looked_for") or _LOOKED_FOR_BEFORE)
        why = [f"CPU flag {f} missing" for f in requires.flags if f not in present]
        for flag in requires.absent:
            if flag in present:
                why.append(f"CPU flag {flag} present")
            elif flag not in looked:
                why.append(f"CPU flag {flag} never looked for, so its absence is not proven")
        device = self.get("gpu")
        if requires.device and not device:
            why.append("no GPU")
        elif requires.device and isinstance(device, dict) and device.get("available") is False:
            # A probe that describes a device it could not use proves nothing about it.
            why.append(f"its device {device.get('name')!r} was stored as unavailable")
        return why

    def unproven(self, target: Target) -> list[str]:
        """Why a recording made on this machine does not prove ``target`` (its hardware, check
        and environment): the one rule for the audit, --adopt and a bundle."""
        if why := self.unmet(target.requires):
            why.append(f"{target.name} requires {target.requires}")
        ran = self.run_for
        if target.check and ran.get("check") != target.check.prints:
            why.append(f"its check printed {ran.get('check')!r}, {target.name} needs {target.check.prints!r}")
        # An environment it does not state, its check (an emulated target's proof that the
        # limits took effect) answers for.
        if ran.get("env") is not None and ran["env"] != dict(target.env):
            why.append(f"it ran with {ran.get('env')!r}, {target.name} runs with {dict(target.env)!r}")
        return why


def this_cpu(extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """This machine's CPU from /proc/cpuinfo (no Python is started), and which of FEATURES and
    ``extra`` it has; ``looked_for`` lists them all, so a recording proves a flag's absence."""
    model: str | None = None
    flags: set[str] = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip().lower()
            if key == "model name" and model is None:
                model = value.strip()
            elif key in ("flags", "features") and not flags:
                flags = set(value.split())
    if model is None and sys.platform == "darwin":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            sysctl = ["sysctl", "-n", "machdep.cpu.brand_string"]
            model = subprocess.check_output(sysctl, stderr=subprocess.DEVNULL, text=True, timeout=60).strip()
    looked = list(FEATURES) + sorted(set(extra) - set(FEATURES))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "model": model or platform.processor() or platform.machine(),
        "arch": platform.machine(),
        "cores": cores,
        "features": [f for f in looked if f in flags],
        "looked_for": looked,
    }


def unmet_here(targets: Targets, target: Target, look_for_device: bool = False) -> list[str]:
    """Why this machine is not the kind ``target`` is, by its CPU flags; a device is the target's
    check to prove (runner.check), or with ``look_for_device`` its cheap ``detect`` look."""
    here = Machine({"cpu": this_cpu(targets.flags), "gpu": None})
    why = [w for w in here.unmet(target.requires) if w != "no GPU"]
    if look_for_device and target.requires.device and not target.detected():
        how = "it declares nothing to detect it by"
        if target.detect:
            how = f"{', '.join(target.detect)} not found"
        why.append(f"{target.requires.device} not detected ({how})")
    return why


def targets_here(targets: Targets) -> list[str]:
    """The targets whose hardware this machine is (a device target's check may still fail)."""
    return [t.name for t in targets if not unmet_here(targets, t, look_for_device=True)]


def why_not_here(targets: Targets, target: Target) -> str:
    """The recorder's reason, naming the targets this machine can record."""
    here = ", ".join(targets_here(targets)) or "none of the targets"
    return (
        f"this machine is not a {target.name} machine ({'; '.join(unmet_here(targets, target))}; "
        f"{target.name} requires {target.requires}); this machine can record {here}"
    )


def here_line(targets: Targets) -> str:
    """A line for --list and --check: which targets this machine is, and why not the others."""
    others = [f"{t.name} ({'; '.join(why)})" for t in targets if (why := unmet_here(targets, t, True))]
    line = f"this machine is: {', '.join(targets_here(targets)) or 'none of the targets'}"
    return line + (f"; not: {', '.join(others)}" if others else "")
