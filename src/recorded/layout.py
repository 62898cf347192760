"""What a working copy of the site is made of, for tests and benchmarks that build one."""

from __future__ import annotations

import shutil
from pathlib import Path

#: Everything `mkdocs build` (and Zensical) reads from the project (pyproject.toml: the targets).
SITE_SOURCES = ("mkdocs.yml", "pyproject.toml", "docs", "overrides", "snippets", "recordings")


def copy_site(root: Path, dst: Path, extra: tuple[str, ...] = ()) -> Path:
    """Copy the site's sources (and any ``extra`` paths) from root into dst, which may exist."""
    dst.mkdir(parents=True, exist_ok=True)
    for part in (*SITE_SOURCES, *extra):
        src = root / part
        if src.is_dir():
            shutil.copytree(src, dst / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dst / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst / part)
    return dst
