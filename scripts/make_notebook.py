#!/usr/bin/env python3
"""Write each lesson's notebook (its `notebook` in pyproject.toml) from its pages and the recordings.

python scripts/make_notebook.py           # (re)write every lesson's notebook under docs/
python scripts/make_notebook.py --check   # exit 1 if any differs from a fresh generation
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from recorded.model.store import Store  # noqa: E402 (after sys.path gains src/
from recorded.notebook import notebook_path, render, with_notebooks  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a notebook is missing or out of date"
    )
    args = parser.parse_args(argv)
    lessons = with_notebooks(ROOT)
    if not lessons:
        print(
            'no lesson declares a notebook ([tool.recorded.lessons.NAME] notebook = "NAME.ipynb" '
            "in pyproject.toml)."
        )
    outdated = 0
    for lesson in lessons:
        path = notebook_path(ROOT, lesson)
        shown = path.relative_to(ROOT).as_posix()
        text, problems = render(ROOT, lesson)
        for problem in problems:
            print(f"warning: {problem}", file=sys.stderr)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            print(f"{shown} is up to date.")
        elif args.check:
            why = "is missing" if current is None else "is out of date with the pages, snippets or recordings"
            print(
                f"{shown} {why}: run `{Store(ROOT).settings.commands.all}` and commit the result.",
                file=sys.stderr,
            )
            outdated += 1
        else:
            path.write_text(text, encoding="utf-8", newline="\n")
            print(f"wrote {shown}")
    return 1 if outdated else 0


if __name__ == "__main__":
    sys.exit(main())
