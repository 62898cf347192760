"""Each lesson's notebook, built from its pages (prose.py) and the recordings (build.py)."""

from .build import build, notebook_path, render, snippet_cells, with_notebooks

__all__ = ["build", "notebook_path", "render", "snippet_cells", "with_notebooks"]
