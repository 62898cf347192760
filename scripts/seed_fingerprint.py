#!/usr/bin/env python3
"""The seed lesson's fingerprint: `python scripts/seed_fingerprint.py [SEED_DIR]`.

Every sentence on the site is the project's own: no run of RUN words of the seed lesson
(the brief the lesson was written from, ../shared/seed/ beside the checkout) may stand on a
page as the seed wrote it. The tests check that from tests/seed-runs.txt, which holds a
short hash of each run of the seed's words and none of its text, so they read nothing
outside the repository and the seed's prose is not copied into it. Run this again only if
the seed changes.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seed"
FINGERPRINT = ROOT / "tests" / "seed-runs.txt"
RUN = 10  # words in a row that count as copied


def words(text: str) -> list[str]:
    """The text as words only: lower case, punctuation and Markdown markup dropped, so a
    copied sentence is found whatever its formatting or line breaks."""
    return re.findall(r"[a-z0-9]+", text.lower())


def digest(run: tuple[str, ...]) -> str:
    """A run's hash: 48 bits, so a page's few thousand runs meet no false match."""
    return hashlib.sha256(" ".join(run).encode()).hexdigest()[:12]


def runs(seq: list[str], n: int = RUN) -> set[str]:
    """The hash of every n-word window of seq."""
    return {digest(tuple(seq[i : i + n])) for i in range(len(seq) - n + 1)}


def copied(page: list[str], seed: set[str], n: int = RUN) -> list[str]:
    """The longest stretches of the page whose every n-word window is in the seed."""
    hits, i = [], 0
    while i <= len(page) - n:
        if digest(tuple(page[i : i + n])) in seed:
            j = i + 1
            while j <= len(page) - n and digest(tuple(page[j : j + n])) in seed:
                j += 1
            hits.append(" ".join(page[i : j + n - 1]))
            i = j + n - 1
        else:
            i += 1
    return hits


def read_fingerprint(path: Path = FINGERPRINT) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def main(argv: list[str]) -> int:
    seed = Path(argv[0]) if argv else SEED
    texts = sorted(seed.glob("*.txt")) if seed.is_dir() else []
    if not texts:
        print(f"no seed lesson in {seed}: pass the folder that holds its .txt files", file=sys.stderr)
        return 2
    found: set[str] = set()
    for text in texts:
        found |= runs(words(text.read_text(encoding="utf-8")))
    header = f"# {RUN}-word runs of the seed lesson, hashed (scripts/seed_fingerprint.py): no text of it\n"
    FINGERPRINT.write_text(header + "\n".join(sorted(found)) + "\n", encoding="utf-8")
    print(f"wrote {FINGERPRINT.relative_to(ROOT)}: {len(found)} runs from {len(texts)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
