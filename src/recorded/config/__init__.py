"""What a project declares for the engine: its targets, lessons and known devices, under one
table of its ``pyproject.toml`` (and of each snippet's PEP 723 header), ``[tool.recorded]``.
Standard library only, every module: the recorder reads them on bare hardware runners."""

from __future__ import annotations

from .schema import ConfigError

#: The engine's one name: the package, ``python -m recorded``, the ``[tool.recorded]`` tables.
TOOL = "recorded"
_OLD = "record-runs"  # the table's name before the engine had one name


def tool_table(config: object, where: str, error: type[ConfigError] = ConfigError) -> dict:
    """A parsed TOML document's ``[tool.recorded]`` table ({} if none); refuses the old name as ``error``."""
    tool = config.get("tool", {}) if isinstance(config, dict) else {}
    if not isinstance(tool, dict):
        return {}
    if _OLD in tool:
        raise error(f"{where}: [tool.{_OLD}] is now [tool.{TOOL}]: rename it and its sub-tables.")
    table = tool.get(TOOL, {})
    return table if isinstance(table, dict) else {"": table}
