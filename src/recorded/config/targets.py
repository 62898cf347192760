"""Targets: the kinds of machine a recording speaks for, declared in tab order under
``[tool.recorded.targets.<name>]``; a project that declares none gets builtin.toml's."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from . import TOOL, cpu_flags, devices, schema, tool_table
from .devices import Device
from .schema import Key, any_text, boolean, list_of, python, text

TABLE = "tool.recorded.targets"
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")

_CHECK = schema.described(
    {
        "code": Key("Python whose last printed line proves the target", python, required=True),
        "prints": Key("a string, the line the check must print", any_text, required=True),
    },
    {
        "code": "run in the target's environment before recording",
        "prints": "the line the check's code must print last, or nothing is recorded on this target",
    },
)
_REQUIRES = {
    "flags": Key("a list of CPU flag names", list_of(text), default=[], means="flags the CPU must have"),
    "absent": Key("a list of CPU flag names", list_of(text), default=[], means="flags the CPU must not have"),
}
_KEYS = {
    "label": Key("a string", text, required=True),
    "short": Key("a string of a word or two", text),
    "provides": Key("a list of strings", list_of(text, at_least=1), required=True),
    "description": Key("a string", text, required=True),
    "env": Key("a table of strings", schema.table_of(any_text), default={}),
    "required": Key("true or false", boolean, default=False),
    "detect": Key("a list of strings", list_of(text), default=[]),
    "check": Key("a table with code and prints, both strings", table=_CHECK),
    "requires": Key("a table of flags (a list) and absent (a list)", table=_REQUIRES),
    "device": Key(
        "the key of a known device or a table of name, probe, available and guard", text, table=devices.SCHEMA
    ),
    "runs-on": Key("a runner label or a list of them", lambda v: text(v) or list_of(text)(v), default=[]),
    "emulated": Key("true or false", boolean, default=False),
    "host": Key("the name of another target", text),
}
_MEANS = {
    "label": "the tab's name, the same on every page",
    "short": "the tab's name where room is short (a phone)",
    "provides": "what a snippet may require of it (`cpu`, `cuda`): a snippet runs where its `requires` are all provided",
    "description": "one honest line about the kind, on the machines page",
    "env": "environment variables set for each run and for its check (a CPU kind hides every GPU)",
    "required": "every build and `make test` fail until each snippet has a fresh recording on it",
    "detect": "files or commands, one of which must exist on a machine of this kind",
    "check": "proves, in the run's own environment, that the run is this kind",
    "requires": "the hardware it is, as /proc/cpuinfo reports it: checked before recording and in every recording",
    "device": "its device beyond the CPU, by the key of a known one (builtin.toml) or in full",
    "runs-on": "the CI runner labels that record it (.github/workflows/record.yml)",
    "emulated": "the same machine as its host, with limits set in `env` that its `check` proves",
    "host": "an emulated kind's real machine: it takes the host's `requires`, and shares its machine",
}
SCHEMA = schema.described(_KEYS, _MEANS)


class TargetError(schema.ConfigError):
    """A target that is unknown or badly declared; the message says where and what to write."""


@dataclass(frozen=True)
class Check:
    code: str
    prints: str


@dataclass(frozen=True)
class Requirement:
    """The hardware a kind of machine is: CPU flags present and absent, and its device's name."""

    flags: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    device: str = ""

    def __str__(self) -> str:
        words = [f"{f} present" for f in self.flags] + [f"{f} absent" for f in self.absent]
        return ", ".join(words + ([self.device] if self.device else [])) or "nothing in particular"


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
    #: The hardware it is, and its device: for an emulated target, its host's (set by ``parse``).
    requires: Requirement = Requirement()
    runs_on: tuple[str, ...] = ()
    host: str | None = None  # set only for an emulated target
    device: Device | None = None
    #: An emulated target's host's environment, where its check must print something else.
    host_env: tuple[tuple[str, str], ...] = ()
    short: str = ""

    def __str__(self) -> str:  # in messages a target is its name
        return self.name

    @property
    def tab(self) -> str:
        return self.short or self.label

    @property
    def needs_device(self) -> bool:
        return self.device is not None

    @property
    def emulated(self) -> bool:
        return self.host is not None

    def detected(self) -> bool:
        """A cheap look, without starting Python, for what the target needs (a driver, say). A
        device with nothing to detect it by is never seen this way; its check can still prove it."""
        if not self.detect:
            return not self.needs_device
        return any(Path(d).exists() if d.startswith("/") else shutil.which(d) for d in self.detect)


@dataclass(frozen=True)
class Targets:
    """A project's targets, in tab order, and the ones ``--target auto`` prefers."""

    by_name: dict[str, Target]
    auto: tuple[str, ...]
    source: str  #: the file that declares them, in words

    def __iter__(self):
        return iter(self.by_name.values())

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.by_name)

    @property
    def flags(self) -> tuple[str, ...]:
        """Every CPU flag some requirement names: a recording stores each, present or not."""
        return tuple(sorted({f for t in self for f in t.requires.flags + t.requires.absent}))

    def host_of(self, target: Target) -> Target:
        """The native target whose machine ``target`` shares: its host, or itself."""
        return self[target.host or target.name]

    def sharing(self, target: Target) -> tuple[Target, ...]:
        """The targets recorded on one machine with ``target``: its host and the host's emulations."""
        return tuple(t for t in self if self.host_of(t) == self.host_of(target))

    @property
    def capabilities(self) -> frozenset[str]:
        """Everything some target provides: what a snippet may require."""
        return frozenset().union(*(t.provides for t in self))

    def get(self, name: str, where: str = "") -> Target:
        if name not in self.by_name:
            raise TargetError(
                f"{where + ': ' if where else ''}unknown target {name!r}; "
                f"the targets are {list(self.by_name)} (declared in {self.source})."
            )
        return self.by_name[name]

    __getitem__ = get

    def device_for(self, requires: frozenset[str]) -> Device | None:
        """The device a snippet requiring ``requires`` needs: none if a target without one provides it all."""
        able = [t for t in self if requires <= t.provides]
        return None if not able or any(t.device is None for t in able) else able[0].device


def _entry(name: str, entry: object, where: str) -> Target:
    if not set(name) <= NAME_CHARS or not name[0].isalpha():
        raise TargetError(
            f"{where}: target name {name!r}: use lower-case letters, digits and "
            "dashes, starting with a letter (it names a folder under recordings/)."
        )
    shown = f"{where}: [{TABLE}.{name}]"
    if isinstance(entry, dict) and "gpu" in (entry.get("requires") or {}):  # the key before devices
        raise TargetError(
            f"{shown} requires.gpu is no longer a key: a target with a device declares it, "
            f"device = <the key of a known one: {sorted(devices.known())}> or a table of "
            "name, probe and available (src/recorded/config/builtin.toml shows one)."
        )
    v = schema.validate(SCHEMA, entry, where, f"{TABLE}.{name}", TargetError)
    check = Check(v["check"]["code"], v["check"]["prints"].strip()) if v["check"] else None
    emulated, host = v["emulated"], v["host"]
    if emulated and host is None:
        raise TargetError(f'{shown} is emulated but names no host: add host = "<the target it runs on>".')
    if host and not emulated:
        raise TargetError(
            f"{shown} names host {host!r} but is not emulated: add emulated = true or drop host."
        )
    if emulated and check is None:
        raise TargetError(f"{shown} is emulated and has no check: add one proving its limits took effect.")
    device = v["device"]
    if isinstance(device, str) and device not in devices.known():
        raise TargetError(
            f"{shown} device {device!r} is not a known device (known: {sorted(devices.known())}); "
            "declare it in full: device = { name = ..., probe = ..., available = ... }."
        )
    if device is not None:
        device = devices.make(name, device) if isinstance(device, dict) else devices.known()[device]
        # A device proves itself before anything is recorded: by the target's check, or else by ``available``.
        setup, expression = device.available_parts
        check = check or Check((setup + "\n" if setup else "") + f"print(bool({expression}))", "True")
    requires = v["requires"] or {"flags": [], "absent": []}
    for key in _REQUIRES:
        if bad := cpu_flags.unknown(requires[key]):
            raise TargetError(
                f"{shown} requires.{key}: unknown CPU flag(s) {', '.join(bad)}; use the names "
                "Linux shows in /proc/cpuinfo (known ones: src/recorded/config/cpu_flags.py)."
            )
    if both := sorted(set(requires["flags"]) & set(requires["absent"])):
        raise TargetError(f"{shown} requires: {both} both present (flags) and absent (absent).")
    return Target(
        name,
        v["label"].strip(),
        frozenset(v["provides"]),
        " ".join(v["description"].split()),
        tuple(v["env"].items()),
        v["required"],
        tuple(v["detect"]),
        check,
        Requirement(tuple(requires["flags"]), tuple(requires["absent"]), device.name if device else ""),
        tuple([v["runs-on"]] if isinstance(v["runs-on"], str) else v["runs-on"]),
        host,
        device,
        short=(v["short"] or "").strip(),
    )


def parse(config: dict, where: str) -> Targets:
    tool = tool_table(config, where, TargetError)
    declared, auto, source = tool.get("targets"), tool.get("auto"), where
    if declared is None:
        builtin = devices.builtin()[TOOL]
        declared, auto = builtin["targets"], tool.get("auto", builtin["auto"])
        source = "the built-in targets (no [tool.recorded.targets] in pyproject.toml)"
    if not isinstance(declared, dict) or not declared:
        raise TargetError(f"{where}: [{TABLE}] must hold at least one target table, such as [{TABLE}.cpu].")
    by_name = {name: _entry(name, entry, where) for name, entry in declared.items()}
    for t in list(by_name.values()):  # each emulated target takes its host's hardware and environment
        if t.host is None:
            continue
        host = by_name.get(t.host)
        shown = f"{where}: [{TABLE}.{t.name}] host {t.host!r}"
        if host is None:
            raise TargetError(f"{shown} is not a target; the targets are {list(by_name)}.")
        if host.emulated:  # itself included: it names a host, so it is emulated
            raise TargetError(f"{shown} must be a native target (one that names no host).")
        own = t.requires if {"requires", "device"} & set(declared[t.name]) else host.requires
        if own != host.requires or not t.provides <= host.provides:
            raise TargetError(
                f"{shown} requires {host.requires} and provides {sorted(host.provides)}, but {t.name} "
                f"claims to require {own} and provide {sorted(t.provides)}: an emulated target runs on "
                "its host's hardware; drop its requires or name a host that is that hardware."
            )
        by_name[t.name] = replace(t, requires=host.requires, device=host.device, host_env=host.env)
    if auto is None:  # what --target auto and the live tests choose from: the most capable first
        auto = sorted(by_name, key=lambda n: -len(by_name[n].provides))
    if not isinstance(auto, list) or not all(isinstance(a, str) for a in auto):
        raise TargetError(f"{where}: [tool.recorded] auto must be a list of target names.")
    if unknown := [a for a in auto if a not in by_name]:
        raise TargetError(
            f"{where}: [tool.recorded] auto names unknown target(s) {unknown}; the targets are {list(by_name)}."
        )
    return Targets(by_name, tuple(auto), source)


def load(root: Path) -> Targets:
    """The targets declared in root/pyproject.toml, or the built-in ones (builtin.toml)."""
    return parse(schema.read_project(root, TargetError) or {}, schema.CONFIG_FILE)
