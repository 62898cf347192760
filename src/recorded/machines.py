"""Which machine a recording was made on, as a stable identity.

Standard library only. A recording's ``machine`` block (see provenance.py) holds load,
dates and versions of the tree that change from run to run; the identity keeps only what
makes two runs the same kind of machine: the CPU model, its architecture, the cores the
run could use, the CPU flags that decide 16-bit speed, the torch build and the GPU.
Every recording of a target must share one identity (one tab, one machine).
"""

from __future__ import annotations

from typing import Any


def identity(machine: dict[str, Any]) -> dict[str, Any]:
    """The stable part of a recording's ``machine`` block: never load, date or clock."""
    cpu = machine.get("cpu") or {}
    gpu = machine.get("gpu") or {}
    return {
        "cpu": cpu.get("model"),
        "arch": cpu.get("arch"),
        "cores": cpu.get("cores"),
        "flags": sorted(cpu.get("features") or []),
        "torch": machine.get("torch"),
        "gpu": gpu.get("name"),
    }


def same_machine(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two ``machine`` blocks describe the same machine."""
    return identity(a) == identity(b)


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What tells two machines apart, as ``key: a != b`` lines (empty when the same)."""
    ia, ib = identity(a), identity(b)
    return [f"{key}: {ia[key]!r} != {ib[key]!r}" for key in ia if ia[key] != ib[key]]
