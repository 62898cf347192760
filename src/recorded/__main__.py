"""`python -m recorded`: the recorder, for the project in the current folder (as record_runs.py)."""

import sys

from .cli import main

sys.exit(main())
