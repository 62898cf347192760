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


#: What every recording looked for before recordings said so (``cpu.looked_for``).
_LOOKED_FOR_BEFORE = (
    "avx2",
    "fma",
    "avx512f",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "asimd",
    "asimdhp",
    "bf16",
    "sve",
)


def unmet(requires, machine: dict[str, Any]) -> list[str]:
    """Why a ``machine`` block is not the hardware ``requires`` (a targets.Requirement)
    says, from what the block itself stores; empty when it is."""
    cpu = machine.get("cpu") or {}
    present = set(cpu.get("features") or [])
    looked = set(cpu.get("looked_for") or _LOOKED_FOR_BEFORE)
    why = [f"CPU flag {f} missing" for f in requires.flags if f not in present]
    for flag in requires.absent:
        if flag in present:
            why.append(f"CPU flag {flag} present")
        elif flag not in looked:
            why.append(f"CPU flag {flag} never looked for, so its absence is not proven")
    device = machine.get("gpu")
    if requires.device and not device:
        why.append("no GPU")
    elif requires.device and isinstance(device, dict) and device.get("available") is False:
        # A probe that describes a device it could not use proves nothing about it.
        why.append(f"its device {device.get('name')!r} was stored as unavailable")
    return why


def words(machine: dict[str, Any]) -> str:
    """One machine's identity in a line, for messages: model, cores, flags, torch, GPU."""
    i = identity(machine)
    return f"{i['cpu']} ({i['cores']} cores, flags {', '.join(i['flags']) or 'none'}, torch {i['torch']}" + (
        f", GPU {i['gpu']})" if i["gpu"] else ")"
    )
