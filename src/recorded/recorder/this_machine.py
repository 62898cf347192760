"""Which machine made a recording: its CPU, the target's device (as its own probe describes it),
library versions (probed in the snippets' interpreter and environment) and the git commit."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from ..config import targets
from ..config.devices import Device
from ..model import machines, renewal
from . import runner

# Read the versions from the installed packages' metadata, which takes milliseconds where
# importing torch takes seconds; a device's own probe imports what it needs.
_VERSIONS = r"""
import json, platform
from importlib import metadata
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
print(json.dumps({"python": platform.python_version(), "numpy": version("numpy"), "torch": version("torch")}))
"""


def _last_json(script: str, env: dict[str, str], what: str, error: type[Exception], device: bool = False):
    """What ``script`` printed as JSON on its last line, in the snippets' interpreter."""
    try:
        with runner.folder("probe") as tmp:
            done = runner.run_code(script, Path(tmp), env, device)
    except (OSError, subprocess.SubprocessError) as exc:
        raise error(f"could not run {what} with {sys.executable} ({exc})") from None
    last = runner.last_line(done.stdout)
    with contextlib.suppress(ValueError):
        if done.returncode == 0:
            return json.loads(last)
    raise error(
        f"{what} did not print JSON as its last line (it printed {last!r}"
        + (f", exit code {done.returncode}: {runner.last_line(done.stderr)}" if done.returncode else "")
        + ")"
    )


class ProbeFailed(targets.TargetError):
    """A target's device probe that did not describe a device: nothing is recorded on it."""


def probe(env: dict[str, str], device: Device | None = None) -> dict:
    """Library versions as the snippets see them, and ``device`` as its probe describes it (under
    "gpu", the name recordings have always used; None without a device)."""
    info = _last_json(_VERSIONS, env, "the version probe", RuntimeError)
    info["gpu"] = None
    if device is not None:
        what = f"the {device.key} device's probe"
        found = _last_json(device.probe, env, what, ProbeFailed, device=True)
        if found is not None and not (isinstance(found, dict) and isinstance(found.get("name"), str)):
            raise ProbeFailed(
                f'{what} printed {found!r}: it must print a JSON object with a "name", '
                "or null when no such device is visible. Nothing was recorded."
            )
        info["gpu"] = found
    return info


def machine(root: Path, env: dict[str, str], device: Device | None = None) -> dict:
    info = probe(env, device)
    try:
        flags = targets.load(root).flags
    except targets.TargetError:
        flags = ()
    commit = renewal.git(root, "rev-parse", "HEAD")
    status = renewal.git(root, "status", "--porcelain", "--untracked-files=no")
    return {
        "os": platform.platform(),
        "cpu": machines.this_cpu(flags),
        **{key: info[key] for key in ("gpu", "python", "torch", "numpy")},
        "git": {
            "commit": commit.strip() if commit else None,
            "dirty": bool(status.strip()) if status is not None else None,
        },
        # Each run gets an empty TORCHINDUCTOR_CACHE_DIR: its model is compiled afresh (torch's
        # precompiled C++ header, a machine's once-only cost, is shared: runner._precompiled).
        "compile_cache": "cold",
        # Other work on the machine distorts timings; say how busy it was.
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
