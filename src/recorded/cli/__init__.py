"""The recorder's command line (scripts/record_runs.py, python -m recorded): options.py parses
once, a module per command, dispatch.py runs the one asked for and reports errors."""

from .dispatch import main as main
from .options import MODULE as MODULE
