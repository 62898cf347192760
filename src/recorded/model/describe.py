"""Words for machines and recordings, shared by the pages, the recordings table and the notebook."""

from __future__ import annotations

import hashlib
import re

from ..config import devices
from ..config.targets import Target, Targets
from .machines import Machine
from .recording import Recording

#: The features that decide how fast 16-bit arithmetic runs on a CPU, most telling first.
_TELLING = {
    "amx_bf16": "AMX-BF16",
    "avx512_bf16": "AVX-512 BF16",
    "avx512_fp16": "AVX-512 FP16",
    "avx512f": "AVX-512",
    "avx2": "AVX2",
    "bf16": "BF16",
    "sve": "SVE",
    "asimdhp": "FP16 SIMD",
}


def telling_features(machine: Machine) -> list[str]:
    return [name for flag, name in _TELLING.items() if flag in machine.features]


def _cpu(m: Machine, model: object, features: int) -> str:
    telling, cores = ", ".join(telling_features(m)[:features]), m.cpu.get("cores")
    return f"{model}" + (f" ({telling})" if telling else "") + (f", {cores} cores" if cores else "")


def cpu(machine: Machine) -> str:
    return _cpu(machine, machine.cpu.get("model") or "unknown CPU", 3)


def gpu(machine: Machine) -> str | None:
    return devices.describe(device) if (device := machine.device) else None


def machine(m: Machine) -> str:
    return f"{g} with {cpu(m)}" if (g := gpu(m)) else cpu(m)


def short_machine(m: Machine, device_code: bool) -> str:
    """The machine as one output's line names it: the device for code that ran on it, else the
    CPU's make and family, most telling feature and cores, with the device it sat beside
    ("Intel Xeon (AMX-BF16), 16 cores, with NVIDIA H200")."""
    device = m.device
    if device and device_code:
        return str(device.get("name") or "an unnamed device")
    model = str(m.cpu.get("model") or "unknown CPU")
    model = re.sub(r"\((R|TM|tm|r)\)|\bCPU\s*@.*$|@.*$|\bProcessor\b|\b\d+-Core\b", "", model)
    short_cpu = _cpu(m, " ".join(model.split()) or "unknown CPU", 1)
    return short_cpu + (f", with {device.get('name')}" if device else "")


def anchor(m: Machine) -> str:
    """The id of a machine's description on the recordings page: one per stored identity."""
    return "machine-" + hashlib.sha256(repr(m.identity).encode()).hexdigest()[:10]


def provenance(rec: Recording, device_code: bool = False) -> str:
    """One output's line: the machine in a few words, torch, the date and the run time."""
    torch = rec.machine.release("torch")
    parts = [
        short_machine(rec.machine, device_code),
        f"torch {torch}" if torch else "",
        rec.recorded_at[:10],
        f"{rec.duration_s:.1f} s" + (f" a run, {len(rec.runs)} runs" if rec.later_runs else ""),
    ]
    return " · ".join(p for p in parts if p)


def emulation(target: Target, known: Targets) -> str | None:
    """For an emulated target (one that names its ``host``), what sets its runs apart from the
    host's: "ONEDNN_MAX_CPU_ISA=AVX2, ATEN_CPU_CAPABILITY=avx2". None for a native target."""
    if not target.host or target.host not in known:
        return None
    theirs = dict(known.get(target.host).env)
    changed = [f"{k}={v}" for k, v in target.env if theirs.get(k) != v]
    return ", ".join(changed) or "nothing in its environment"
