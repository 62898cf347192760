"""Configuration declared once: each table's keys, what each must be, and one validator.

Standard library only: the recorder reads its targets on bare hardware runners.

A table's schema is a dict of ``Key``: the words a message uses for what the value must be,
a test of the value, whether it must be given, its default, and for a nested table its own
schema. ``validate`` checks a table against its schema and returns its values with the
defaults filled in, or raises the caller's error naming the file, the table, the key, what
it must be and what it got. What depends on several keys at once stays with the caller.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

#: The file a project declares itself in.
CONFIG_FILE = "pyproject.toml"


class ConfigError(ValueError):
    """A badly declared table; the message says where, what was expected and what was found."""


def read_project(root: Path, error: type[ConfigError] = ConfigError) -> dict | None:
    """root/pyproject.toml, parsed; None where there is none. A file that is not valid TOML
    raises ``error`` (the caller's kind of ConfigError), in the same words for every reader."""
    try:
        text = (Path(root) / CONFIG_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{CONFIG_FILE}: not valid TOML ({exc}).") from None


@dataclass(frozen=True)
class Key:
    expected: str  #: what the value must be, in words: "a list of strings"
    #: Whether a value is acceptable; for a nested table, another way it may be given (a name).
    test: Callable[[Any], bool] | None = None
    required: bool = False
    default: Any = None
    #: A nested table: its own keys, checked the same way (``expected`` then says what it holds).
    table: dict[str, Key] | None = None
    #: What the setting is for, in a sentence: the one description of it (the contributors'
    #: guide shows these as a table, ``/// target-settings``).
    means: str = ""


# --- tests of values --------------------------------------------------------------------


def text(value: object) -> bool:
    """A string with something in it."""
    return isinstance(value, str) and bool(value.strip())


def any_text(value: object) -> bool:
    return isinstance(value, str)


def texts(value: object) -> bool:
    """A list of non-empty strings (maybe empty)."""
    return isinstance(value, list) and all(text(v) for v in value)


def some_texts(value: object) -> bool:
    """A list of at least one non-empty string."""
    return texts(value) and bool(value)


def text_or_texts(value: object) -> bool:
    return text(value) or texts(value)


def boolean(value: object) -> bool:
    return isinstance(value, bool)


def text_table(value: object) -> bool:
    """A table whose values are strings."""
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def table_of_text_lists(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value.values()
    )


def identifier(value: object) -> bool:
    return isinstance(value, str) and value.isidentifier()


def relative(suffix: str | None = None) -> Callable[[object], bool]:
    """A relative path that stays inside its folder (ending in ``suffix`` when given)."""

    def test(value: object) -> bool:
        if not text(value):
            return False
        pure = PurePosixPath(str(value))
        return not pure.is_absolute() and ".." not in pure.parts and (suffix is None or pure.suffix == suffix)

    return test


def relatives(suffix: str) -> Callable[[object], bool]:
    one = relative(suffix)
    return lambda value: isinstance(value, list) and all(one(v) for v in value)


def python(value: object) -> bool:
    """Python source that compiles."""
    if not text(value):
        return False
    try:
        ast.parse(str(value))
    except SyntaxError:
        return False
    return True


def python_ending_in_expression(value: object) -> bool:
    """Python source whose last statement is an expression (its value is the answer)."""
    return python(value) and isinstance(ast.parse(str(value)).body[-1], ast.Expr)


def either(*tests: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: any(t(value) for t in tests)


# --- the validator ----------------------------------------------------------------------


def validate(
    schema: dict[str, Key], value: object, where: str, table: str, error: type[Exception] = ConfigError
) -> dict[str, Any]:
    """``value``, the table ``[table]`` of the file ``where``, checked against ``schema``: its
    values by key, with the defaults of keys not given (a nested table's values are dicts)."""
    shown = f"{where}: [{table}]"
    if not isinstance(value, dict):
        raise error(f"{shown} must be a table of keys {sorted(schema)}, got {value!r}.")
    unknown = sorted(set(value) - set(schema))
    if unknown:
        raise error(f"{shown} has unknown key(s) {unknown}; the keys are {sorted(schema)}.")
    out: dict[str, Any] = {}
    for name, key in schema.items():
        if name not in value:
            if key.required:
                raise error(f"{shown} lacks {name!r}, which must be {key.expected}.")
            out[name] = key.default
            continue
        given = value[name]
        if key.table is not None and isinstance(given, dict):
            out[name] = validate(key.table, given, where, f"{table}.{name}", error)
        elif key.test is not None and key.test(given):
            out[name] = given
        else:
            raise error(f"{shown} {name} must be {key.expected}, got {given!r}.")
    return out
