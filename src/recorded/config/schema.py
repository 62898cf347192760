"""Configuration declared once: each table's keys, what each must be, and one validator.
What depends on several keys at once stays with the caller."""

from __future__ import annotations

import ast
import dataclasses
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

CONFIG_FILE = "pyproject.toml"
Test = Callable[[Any], bool]


class ConfigError(ValueError):
    """A badly declared table; the message says where, what was expected and what was found."""


def read_project(root: Path, error: type[ConfigError] = ConfigError) -> dict | None:
    """root/pyproject.toml parsed (None if absent); bad TOML raises ``error``, in the same words always."""
    try:
        return tomllib.loads((Path(root) / CONFIG_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{CONFIG_FILE}: not valid TOML ({exc}).") from None


@dataclass(frozen=True)
class Key:
    expected: str  #: what the value must be, in words: "a list of strings"
    test: Test | None = None  #: accepts a value; for a nested table, another way to give it (a name)
    required: bool = False
    default: Any = None
    table: dict[str, Key] | None = None  #: a nested table's own keys, checked the same way
    means: str = ""  #: what the setting is for, once: the contributors' guide's table


def described(keys: dict[str, Key], means: dict[str, str]) -> dict[str, Key]:
    """``keys``, each with what it is for: a long table's ``means``, kept apart to read as one."""
    assert keys.keys() == means.keys(), f"say once what each key is for: {keys.keys() ^ means.keys()}"
    return {name: dataclasses.replace(key, means=means[name]) for name, key in keys.items()}


def is_a(kind: type) -> Test:
    return lambda value: isinstance(value, kind)


any_text = is_a(str)
boolean = is_a(bool)


def text(value: object) -> bool:
    """A string with something in it."""
    return isinstance(value, str) and bool(value.strip())


def list_of(test: Test, at_least: int = 0) -> Test:
    return lambda value: isinstance(value, list) and len(value) >= at_least and all(map(test, value))


def table_of(test: Test) -> Test:
    return lambda value: isinstance(value, dict) and all(map(test, value.values()))


def relative(suffix: str | None = None) -> Test:
    """A relative path that stays inside its folder (ending in ``suffix`` when given)."""

    def test(value: object) -> bool:
        p = PurePosixPath(str(value))
        return text(value) and not p.is_absolute() and ".." not in p.parts and suffix in (None, p.suffix)

    return test


def python(value: object, last_expression: bool = False) -> bool:
    """Python source that compiles; with ``last_expression``, one whose last statement is an expression."""
    try:
        body = ast.parse(str(value)).body if text(value) else None
    except SyntaxError:
        return False
    return body is not None and (not last_expression or bool(body) and isinstance(body[-1], ast.Expr))


def validate(
    schema: dict[str, Key], value: object, where: str, table: str, error: type[Exception] = ConfigError
) -> dict[str, Any]:
    """``value``, the table ``[table]`` of the file ``where``, checked against ``schema``: its
    values by key, with the defaults of keys not given (a nested table's values are dicts)."""
    shown = f"{where}: [{table}]"
    if not isinstance(value, dict):
        raise error(f"{shown} must be a table of keys {sorted(schema)}, got {value!r}.")
    if unknown := sorted(set(value) - set(schema)):
        raise error(f"{shown} has unknown key(s) {unknown}; the keys are {sorted(schema)}.")
    out: dict[str, Any] = {}
    for name, key in schema.items():
        if name not in value:
            if key.required:
                raise error(f"{shown} lacks {name!r}, which must be {key.expected}.")
            out[name] = key.default
        elif key.table is not None and isinstance(value[name], dict):
            out[name] = validate(key.table, value[name], where, f"{table}.{name}", error)
        elif key.test is not None and key.test(value[name]):
            out[name] = value[name]
        else:
            raise error(f"{shown} {name} must be {key.expected}, got {value[name]!r}.")
    return out
