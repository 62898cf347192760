"""Every sentence on the site is the project's own: no run of ten or more words of the seed
lesson (the brief the lesson was written from, in ../shared/seed/) stands on a page as the
seed wrote it. Facts carry over; sentences do not.

Both texts are compared as words only: lower case, with punctuation and Markdown markup
turned into spaces, so a copied sentence is found whatever its formatting or line breaks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seed"
RUN = 10  # words in a row that count as copied


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def runs(seq: list[str], n: int = RUN) -> set[tuple[str, ...]]:
    return {tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)}


def copied(page: list[str], seed: set[tuple[str, ...]], n: int = RUN) -> list[str]:
    """The longest stretches of the page whose every n-word window is in the seed."""
    hits, i = [], 0
    while i <= len(page) - n:
        if tuple(page[i : i + n]) in seed:
            j = i + 1
            while j <= len(page) - n and tuple(page[j : j + n]) in seed:
                j += 1
            hits.append(" ".join(page[i : j + n - 1]))
            i = j + n - 1
        else:
            i += 1
    return hits


@pytest.fixture(scope="module")
def seed_runs() -> set[tuple[str, ...]]:
    texts = sorted(SEED.glob("*.txt")) if SEED.is_dir() else []
    if not texts:
        pytest.skip(
            f"the seed lesson is not here ({SEED}): these checks need ../shared/seed/ beside the checkout"
        )
    found: set[tuple[str, ...]] = set()
    for text in texts:
        found |= runs(words(text.read_text(encoding="utf-8")))
    return found


def test_the_word_comparison_finds_a_copied_sentence_whatever_its_markup():
    seed = runs(words("Sixteen bits mean half the memory: 14 GB instead of 28, as the table shows."))
    page = words("As *sixteen* bits mean half\nthe `memory` (14 GB instead of 28), as the table shows!")
    assert copied(page, seed) == ["sixteen bits mean half the memory 14 gb instead of 28 as the table shows"]
    assert copied(words("Half the memory: 14 GB, not 28."), seed) == []


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_no_page_repeats_ten_words_of_the_seed(seed_runs, page):
    hits = copied(words(page.read_text(encoding="utf-8")), seed_runs)
    assert not hits, (
        f"docs/{page.name} repeats the seed lesson word for word; say it in the "
        f"project's own words:\n" + "\n".join(f"  - {h}" for h in hits)
    )
