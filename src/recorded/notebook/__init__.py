"""Each lesson's notebook, built from its pages and the recordings (build.py); the pages'
Markdown made plain for Jupyter (prose.py)."""

from .build import build, notebook_path, render, snippet_cells, with_notebooks

__all__ = ["build", "notebook_path", "render", "snippet_cells", "with_notebooks"]
