"""Which machine made a recording: CPU and the features that decide 16-bit speed on it,
GPU, driver, CUDA, library versions and the git commit.

Standard library only; torch and numpy versions come from a probe run in the same
interpreter and environment as the snippets.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from . import targets

# CPU features that decide whether 16-bit arithmetic is fast on a CPU.
FEATURES = (
    "avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
    "amx_int8", "asimd", "asimdhp", "bf16", "sve",
)

_PROBE = r"""
import json, platform
info = {"python": platform.python_version(), "numpy": None, "torch": None, "gpu": None}
try:
    import numpy
    info["numpy"] = numpy.__version__
except ImportError:
    pass
try:
    import torch
    info["torch"] = torch.__version__
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info["gpu"] = {
            "name": p.name,
            "capability": f"{p.major}.{p.minor}",
            "memory_gib": round(p.total_memory / 2**30, 1),
            "cuda": torch.version.cuda,
            "count": torch.cuda.device_count(),
        }
except ImportError:
    pass
print(json.dumps(info))
"""


def _run(cmd: list[str], **kw) -> str | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True, **kw).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def cpu(extra: tuple[str, ...] = ()) -> dict:
    """The CPU, and which of FEATURES and of ``extra`` (the flags the targets' requirements
    name) it has: ``looked_for`` lists them all, so a recording proves a flag's absence."""
    model, flags = None, set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip().lower()
            if key == "model name" and model is None:
                model = value.strip()
            elif key in ("flags", "features") and not flags:
                flags = set(value.split())
    except OSError:
        pass
    if model is None and sys.platform == "darwin":
        model = (_run(["sysctl", "-n", "machdep.cpu.brand_string"]) or "").strip() or None
    looked = list(FEATURES) + sorted(set(extra) - set(FEATURES))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "model": model or platform.processor() or platform.machine(),
        "arch": platform.machine(),
        "cores": cores,
        "features": [f for f in looked if f in flags],
        "looked_for": looked,
    }


def nvidia_present() -> bool:
    """A cheap look for an NVIDIA driver, without importing torch."""
    return Path("/proc/driver/nvidia").exists() or shutil.which("nvidia-smi") is not None


# With every GPU hidden there is nothing to ask torch: read the versions from the installed
# packages' metadata, which takes milliseconds where importing torch takes seconds.
_PROBE_NO_GPU = r"""
import json, platform
from importlib import metadata
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
print(json.dumps({"python": platform.python_version(), "numpy": version("numpy"),
                  "torch": version("torch"), "gpu": None}))
"""


def probe(env: dict[str, str], python: str = sys.executable) -> dict:
    """Library versions and the visible GPU, as the snippets will see them."""
    script = _PROBE_NO_GPU if env.get("CUDA_VISIBLE_DEVICES") == "" else _PROBE
    out = _run([python, "-c", script], env=env)
    if out is None:
        raise RuntimeError(f"could not start {python} to read torch and numpy versions")
    info = json.loads(out.strip().splitlines()[-1])
    if info["gpu"]:
        smi = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
        info["gpu"]["driver"] = smi.strip().splitlines()[0] if smi and smi.strip() else None
    return info


def git(root: Path) -> dict:
    commit = _run(["git", "-C", str(root), "rev-parse", "HEAD"])
    status = _run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
    return {
        "commit": commit.strip() if commit else None,
        "dirty": bool(status.strip()) if status is not None else None,
    }


def machine(root: Path, env: dict[str, str], python: str = sys.executable) -> dict:
    info = probe(env, python)
    try:
        flags = targets.load(root).flags
    except targets.TargetError:
        flags = ()
    return {
        "os": platform.platform(),
        "cpu": cpu(flags),
        "gpu": info["gpu"],
        "python": info["python"],
        "torch": info["torch"],
        "numpy": info["numpy"],
        "git": git(root),
        "compile_cache": "cold",  # each run gets an empty TORCHINDUCTOR_CACHE_DIR
        # Other work on the machine distorts timings; say how busy it was.
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
