"""The recorder's command line (scripts/record_runs.py, python -m recorded): one module per
command, the options parsed once in options.py, errors reported by dispatch.py."""

from .dispatch import main
from .options import MODULE

__all__ = ["MODULE", "main"]
