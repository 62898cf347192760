#!/usr/bin/env python3
"""Redraw every lesson's figures (its `figures` module in pyproject.toml) from the recordings.

python scripts/make_figures.py           # (re)draw every lesson's figures under docs/
python scripts/make_figures.py --check   # exit 1 if any is missing or drawn from other data
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from recorded.config.lessons import load  # noqa: E402 (after sys.path gains src/)
from recorded.model.store import Store  # noqa: E402 (after sys.path gains src/)
from recorded.pages.figures import lesson_figures, out_of_date, render  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="draw nothing; exit 1 if a figure is missing or out of date"
    )
    args = parser.parse_args(argv)
    store, behind = Store(ROOT), []
    for lesson in load(ROOT).values():
        folder, drawn = ROOT / "docs" / lesson.figures_dir, lesson_figures(ROOT, lesson)
        if args.check:
            behind += [file.relative_to(ROOT).as_posix() for file in out_of_date(store, folder, drawn)]
            continue
        for fig in drawn:
            print(render(store, folder, fig).relative_to(ROOT))
    if behind:
        print(
            f"drawn from other recordings than the project holds now: {', '.join(behind)}; "
            f"run `{store.settings.commands.all}` and commit them.",
            file=sys.stderr,
        )
    return 1 if behind else 0


if __name__ == "__main__":
    sys.exit(main())
