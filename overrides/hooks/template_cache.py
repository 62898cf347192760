"""The theme's templates compiled once, not on every build.

MkDocs compiles every template a build renders (44 of Material's, about a sixth of a
second of a build here) and keeps nothing between builds. Jinja's bytecode cache keeps
the compiled code in .cache/jinja/ (ignored by git), keyed by each template's name and a
checksum of its source, and checked against the Python version: an edited template, or an
upgraded theme, is compiled again; an unchanged one is loaded.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemBytecodeCache


def on_env(env: Environment, config, files) -> Environment:
    folder = Path(config.config_file_path).resolve().parent / ".cache" / "jinja"
    folder.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = FileSystemBytecodeCache(str(folder))
    return env
