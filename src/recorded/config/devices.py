"""Devices as data: what a target has beyond the CPU, and how to describe and guard it. A target
declares its device in full or by the key of a known one (builtin.toml's ``[devices.<key>]``).
The engine knows no device: the probe, the notebook's guard and the words for it come from here."""

from __future__ import annotations

import ast
import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import schema
from .schema import Key, any_text, python, text

BUILTIN = Path(__file__).with_name("builtin.toml")

_KEYS = {
    "name": Key('what it is, in words, as in "this cell needs <name>"', text, required=True),
    "probe": Key("Python that prints one JSON object describing the device, or null", python, required=True),
    "available": Key(
        "Python whose last line is an expression, true where the device can be used",
        lambda value: python(value, last_expression=True),
        required=True,
    ),
    "guard": Key(
        "a Python name, the notebook's cell magic for the cells that need it",
        lambda value: isinstance(value, str) and value.isidentifier(),
    ),
    "fields": Key(
        "a table of field = format string (how the probe's fields read on a page)", schema.table_of(any_text)
    ),
}
_MEANS = {
    "name": "the device in a reader's words, in the notebook's skip message",
    "probe": 'run with each recording: the device a recording stores, `"name"` first',
    "available": "true where a run can use it: checked before recording, and by the notebook's guard",
    "guard": "the cell magic that skips, with a reason, a notebook cell needing the device where it is absent",
    "fields": "how the probe's fields read on a page",
}
SCHEMA = schema.described(_KEYS, _MEANS)


@dataclass(frozen=True)
class Device:
    key: str  #: the known device's key, or the name of the target that declares it
    name: str
    probe: str
    available: str
    guard: str
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def available_parts(self) -> tuple[str, str]:
        """``available`` as the statements before its last line and that last expression."""
        *setup, last = ast.parse(self.available).body
        return "\n".join(map(ast.unparse, setup)), ast.unparse(last)

    @property
    def skip_message(self) -> str:
        """What a notebook cell that needs the device prints where there is none."""
        return f"Skipped: this cell needs {self.name} ({self.available_parts[1]} is False here)."


def make(key: str, values: dict) -> Device:
    """A Device from a table already checked against SCHEMA."""
    guard = values.get("guard") or "needs_" + key.replace("-", "_")
    fields = tuple((values.get("fields") or {}).items())
    return Device(key, " ".join(values["name"].split()), values["probe"], values["available"], guard, fields)


@functools.cache
def builtin() -> dict:
    """builtin.toml, parsed: the known devices and the targets of a project that declares none."""
    return tomllib.loads(BUILTIN.read_text(encoding="utf-8"))


@functools.cache
def known() -> dict[str, Device]:
    """The devices a target may name by key."""
    where = f"{BUILTIN.name} (the engine's own data)"
    return {
        key: make(key, schema.validate(SCHEMA, value, where, f"devices.{key}"))
        for key, value in builtin().get("devices", {}).items()
    }


def describe(block: dict) -> str:
    """A device as a recording stores it (what its probe printed), in words: the name, then
    each field the probe gave, worded as the known devices word it or as ``field value``."""
    words: dict[str, str] = {}
    for device in known().values():
        words |= {field: shown for field, shown in device.fields if field not in words}
    given = {k: v for k, v in block.items() if k != "name" and v not in (None, "")}
    bits = []
    for field in [k for k in words if k in given] + [k for k in given if k not in words]:
        try:
            bits.append(words[field].format(given[field]))
        except (KeyError, ValueError, IndexError):  # no words for it, or a value its format does not take
            bits.append(f"{field} {given[field]}")
    name = str(block.get("name") or "an unnamed device")
    return f"{name} ({', '.join(b for b in bits if b)})" if any(bits) else name
