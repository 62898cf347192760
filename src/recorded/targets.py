"""Targets: the kinds of machine a recording speaks for, as data in pyproject.toml.

Standard library only: the recorder reads this on bare hardware runners.

A project declares its targets under ``[tool.record-runs.targets.<name>]``, in the order
their tabs appear::

    [tool.record-runs.targets.cpu-avx2]
    label = "CPU limited to AVX2"         # the tab, the same on every page
    provides = ["cpu"]                    # what a snippet may require of it
    description = "..."                   # one honest line, shown under each output
    env = { ONEDNN_MAX_CPU_ISA = "AVX2" } # set for each run (and for its check)
    required = true                       # must be fresh in every build, not only the release
    detect = ["nvidia-smi"]               # optional: files or commands, one must exist
    # optional: Python run in the target's environment before recording; its last
    # printed line must be `prints`, or nothing is recorded on this target
    check = { code = "import torch; print(torch.backends.cpu.get_cpu_capability())", prints = "AVX2" }
    # optional: the hardware it is, as /proc/cpuinfo reports it (flags present, flags
    # absent) and a GPU; checked before recording, and against every stored recording
    requires = { flags = ["avx2"], absent = ["avx512f"], gpu = false }
    runs-on = ["ubuntu-latest"]            # the CI runner labels that can record it
    # an emulated target (the same machine with limits in env) names its host target: it
    # inherits the host's requirement, and its recordings share the host's machine
    emulated = true
    host = "cpu-amx"

``[tool.record-runs] auto = ["cuda", "cpu"]`` lists, most wanted first, the targets that
``--target auto`` and the tests' live runs choose from. A project that declares no
targets gets ``cpu`` and ``cuda``, as below.
"""

from __future__ import annotations

import dataclasses
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import cpu_flags

CONFIG_FILE = "pyproject.toml"
TABLE = "tool.record-runs.targets"
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")

#: The targets of a project whose pyproject.toml declares none.
DEFAULT_TARGETS = {
    "cpu": {
        "label": "CPU",
        "provides": ["cpu"],
        "description": "the CPU, with every GPU hidden",
        "env": {"CUDA_VISIBLE_DEVICES": ""},
        "required": True,
    },
    "cuda": {
        "label": "CUDA",
        "provides": ["cpu", "cuda"],
        "description": "an NVIDIA GPU through CUDA",
        "detect": ["/proc/driver/nvidia", "nvidia-smi"],
        "check": {"code": "import torch; print(torch.cuda.is_available())", "prints": "True"},
        "requires": {"gpu": True},
    },
}
DEFAULT_AUTO = ["cuda", "cpu"]

# key -> (what it must be, whether it must be given)
_KEYS = {
    "label": ("a string", True),
    "provides": ("a list of strings", True),
    "description": ("a string", True),
    "env": ("a table of strings", False),
    "required": ("true or false", False),
    "detect": ("a list of strings", False),
    "check": ("a table with code and prints, both strings", False),
    "requires": ("a table of flags (a list), absent (a list) and gpu (true or false)", False),
    "runs-on": ("a runner label or a list of them", False),
    "emulated": ("true or false", False),
    "host": ("the name of another target", False),
}


class TargetError(ValueError):
    """A target that is unknown or badly declared; the message says where and what to write."""


@dataclass(frozen=True)
class Check:
    code: str
    prints: str


@dataclass(frozen=True)
class Requirement:
    """The hardware a kind of machine is: CPU flags present and absent, and a GPU."""

    flags: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    gpu: bool = False

    def __str__(self) -> str:
        words = [f"{f} present" for f in self.flags] + [f"{f} absent" for f in self.absent]
        return ", ".join(words + (["a GPU"] if self.gpu else [])) or "nothing in particular"


@dataclass(frozen=True)
class Target:
    name: str
    label: str
    provides: frozenset[str]
    description: str
    env: tuple[tuple[str, str], ...] = ()
    required: bool = False
    detect: tuple[str, ...] = ()
    check: Check | None = None
    #: The hardware it is; for an emulated target, its host's (filled in by ``parse``).
    requires: Requirement = Requirement()
    runs_on: tuple[str, ...] = ()
    host: str | None = None  # set only for an emulated target

    @property
    def needs_gpu(self) -> bool:
        return "cuda" in self.provides

    @property
    def emulated(self) -> bool:
        return self.host is not None

    @property
    def machine_of(self) -> str:
        """The target whose machine this one's recordings must share: its host, or itself."""
        return self.host or self.name

    def detected(self) -> bool:
        """A cheap look, without starting Python, for what the target needs (a driver, say)."""
        return not self.detect or any(
            Path(d).exists() if d.startswith("/") else shutil.which(d) is not None for d in self.detect
        )


@dataclass(frozen=True)
class Targets:
    """A project's targets, in tab order, and the ones ``--target auto`` prefers."""

    by_name: dict[str, Target] = field(default_factory=dict)
    auto: tuple[str, ...] = ()
    source: str = "(built-in)"

    def __iter__(self):
        return iter(self.by_name.values())

    def __len__(self) -> int:
        return len(self.by_name)

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.by_name)

    @property
    def flags(self) -> tuple[str, ...]:
        """Every CPU flag some requirement names: a recording stores each, present or not."""
        named = (f for t in self for f in t.requires.flags + t.requires.absent)
        return tuple(sorted(set(named)))

    def sharing(self, name: str) -> tuple[str, ...]:
        """The targets recorded on one machine with name: its host and the host's emulations."""
        group = self.get(name).machine_of
        return tuple(t.name for t in self if t.machine_of == group)

    @property
    def capabilities(self) -> frozenset[str]:
        """Everything some target provides: what a snippet may require."""
        return frozenset().union(*(t.provides for t in self))

    def get(self, name: str, where: str = "") -> Target:
        """The target called name, or a TargetError naming the known ones."""
        if name not in self.by_name:
            raise TargetError(f"{where + ': ' if where else ''}unknown target {name!r}; "
                              f"the targets are {list(self.by_name)} (declared in {self.source}).")
        return self.by_name[name]

    def label(self, name: str) -> str:
        return self.by_name[name].label if name in self.by_name else name


def _check_entry(name: str, entry: object, where: str) -> Target:
    if not isinstance(entry, dict):
        raise TargetError(f"{where}: [{TABLE}.{name}] must be a table of keys {sorted(_KEYS)}.")
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        raise TargetError(f"{where}: [{TABLE}.{name}] has unknown key(s) {unknown}; "
                          f"the keys are {sorted(_KEYS)}.")
    for key, (kind, needed) in _KEYS.items():
        if needed and key not in entry:
            raise TargetError(f"{where}: [{TABLE}.{name}] lacks {key!r}, which must be {kind}.")

    def bad(key: str) -> TargetError:
        return TargetError(f"{where}: [{TABLE}.{name}] {key} must be {_KEYS[key][0]}, "
                           f"got {entry[key]!r}.")

    def strings(key: str) -> tuple[str, ...]:
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise bad(key)
        return tuple(value)

    for key in ("label", "description"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise bad(key)
    provides = strings("provides")
    if not provides:
        raise bad("provides")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise bad("env")
    required = entry.get("required", False)
    if not isinstance(required, bool):
        raise bad("required")
    check = entry.get("check")
    if check is not None:
        if (not isinstance(check, dict) or set(check) != {"code", "prints"}
                or not all(isinstance(v, str) for v in check.values())):
            raise bad("check")
        check = Check(check["code"], check["prints"].strip())
    runs_on = entry.get("runs-on", [])
    runs_on = [runs_on] if isinstance(runs_on, str) else runs_on
    if not isinstance(runs_on, list) or not all(isinstance(v, str) and v for v in runs_on):
        raise bad("runs-on")
    emulated, host = entry.get("emulated", False), entry.get("host")
    if not isinstance(emulated, bool):
        raise bad("emulated")
    if host is not None and (not isinstance(host, str) or not host):
        raise bad("host")
    if emulated and host is None:
        raise TargetError(f"{where}: [{TABLE}.{name}] is emulated but names no host: add host = "
                          "\"<target>\", the kind of machine it is recorded on with its limits.")
    if host is not None and not emulated:
        raise TargetError(f"{where}: [{TABLE}.{name}] names host {host!r} but is not emulated: "
                          "add emulated = true, or drop host.")
    if emulated and check is None:
        raise TargetError(f"{where}: [{TABLE}.{name}] is emulated and has no check: add a check "
                          "that proves in the run that each limit it sets took effect.")
    return Target(name, entry["label"].strip(), frozenset(provides), " ".join(entry["description"].split()),
                  tuple(env.items()), required, strings("detect"), check,
                  _requirement(name, entry, where), tuple(runs_on), host)


def _requirement(name: str, entry: dict, where: str) -> Requirement:
    value = entry.get("requires", {})
    shown = f"{where}: [{TABLE}.{name}] requires"
    if not isinstance(value, dict) or set(value) - {"flags", "absent", "gpu"}:
        raise TargetError(f"{shown} must be {_KEYS['requires'][0]}, got {value!r}.")
    lists = {}
    for key in ("flags", "absent"):
        names = value.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise TargetError(f"{shown}.{key} must be a list of CPU flag names, got {names!r}.")
        bad = cpu_flags.unknown(names)
        if bad:
            raise TargetError(f"{shown}.{key}: unknown CPU flag(s) {', '.join(bad)}; use the names "
                              "Linux shows in /proc/cpuinfo (known ones: recorded/cpu_flags.py).")
        lists[key] = tuple(names)
    both = sorted(set(lists["flags"]) & set(lists["absent"]))
    if both:
        raise TargetError(f"{shown}: {both} both present (flags) and absent (absent).")
    gpu = value.get("gpu", False)
    if not isinstance(gpu, bool):
        raise TargetError(f"{shown}.gpu must be true or false, got {gpu!r}.")
    return Requirement(lists["flags"], lists["absent"], gpu)


def _hosts(by_name: dict[str, Target], declared: dict, where: str) -> dict[str, Target]:
    """Each emulated target takes its host's requirement; a bad host is refused."""
    out = dict(by_name)
    for name, t in by_name.items():
        if not t.emulated:
            continue
        host = by_name.get(t.host)
        shown = f"{where}: [{TABLE}.{name}] host {t.host!r}"
        if host is None:
            raise TargetError(f"{shown} is not a target; the targets are {list(by_name)}.")
        if host.emulated or host.name == name:
            raise TargetError(f"{shown} must be a native target (one that names no host).")
        own = t.requires if "requires" in declared[name] else host.requires
        if own != host.requires or not t.provides <= host.provides:
            raise TargetError(f"{shown} requires {host.requires} and provides {sorted(host.provides)}, "
                              f"but {name} claims to require {own} and provide {sorted(t.provides)}: "
                              "an emulated target runs on its host's hardware; drop its requires "
                              "or name a host that is that hardware.")
        out[name] = dataclasses.replace(t, requires=host.requires)
    return out


def parse(config: dict, where: str) -> Targets:
    """Targets from the ``[tool.record-runs]`` table of a pyproject.toml (already parsed)."""
    tool = config.get("tool", {}).get("record-runs", {})
    declared = tool.get("targets")
    if declared is None:
        declared, auto = DEFAULT_TARGETS, tool.get("auto", DEFAULT_AUTO)
        where_shown = "the built-in targets (no [tool.record-runs.targets] in pyproject.toml)"
    else:
        auto, where_shown = tool.get("auto"), where
    if not isinstance(declared, dict) or not declared:
        raise TargetError(f"{where}: [{TABLE}] must hold at least one target table, "
                          f"such as [{TABLE}.cpu].")
    by_name = {}
    for name, entry in declared.items():
        if not set(name) <= NAME_CHARS or not name[0].isalpha():
            raise TargetError(f"{where}: target name {name!r}: use lower-case letters, digits and "
                              "dashes, starting with a letter (it names a folder under recordings/).")
        by_name[name] = _check_entry(name, entry, where)
    by_name = _hosts(by_name, declared, where)
    if auto is None:  # the most capable first
        auto = sorted(by_name, key=lambda n: -len(by_name[n].provides))
    if not isinstance(auto, list) or not all(isinstance(a, str) for a in auto):
        raise TargetError(f"{where}: [tool.record-runs] auto must be a list of target names.")
    unknown = [a for a in auto if a not in by_name]
    if unknown:
        raise TargetError(f"{where}: [tool.record-runs] auto names unknown target(s) {unknown}; "
                          f"the targets are {list(by_name)}.")
    return Targets(by_name, tuple(auto), where_shown)


def load(root: Path) -> Targets:
    """The targets declared in root/pyproject.toml, or the built-in cpu and cuda."""
    path = Path(root) / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return parse({}, CONFIG_FILE)
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TargetError(f"{CONFIG_FILE}: not valid TOML ({exc}).") from None
    return parse(config, CONFIG_FILE)
