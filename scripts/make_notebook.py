#!/usr/bin/env python3
"""Write the lesson as a notebook, docs/lesson.ipynb, from the pages and the recordings.

    python scripts/make_notebook.py           # (re)write docs/lesson.ipynb
    python scripts/make_notebook.py --check   # exit 1 if it differs from a fresh generation
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from recorded.notebook import COMMAND, notebook_path, render  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the notebook is missing or out of date")
    args = parser.parse_args(argv)
    path = notebook_path(ROOT)
    shown = path.relative_to(ROOT).as_posix()
    text, problems = render(ROOT)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if args.check:
        if current != text:
            why = "is missing" if current is None else "is out of date with the pages, snippets or recordings"
            print(f"{shown} {why}: run `{COMMAND}` and commit the result.", file=sys.stderr)
            return 1
        print(f"{shown} is up to date.")
        return 0
    if current == text:
        print(f"{shown} is up to date.")
    else:
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
