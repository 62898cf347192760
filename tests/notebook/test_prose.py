"""Every sentence on the site is the project's own: no run of ten or more words of the seed
lesson stands on a page as the seed wrote it. Facts carry over; sentences do not. The seed
is read from its fingerprint in the repository (scripts/seed_fingerprint.py), never from
outside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seed_fingerprint import FINGERPRINT, copied, read_fingerprint, runs, words

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def seed_runs() -> set[str]:
    return read_fingerprint()


def test_the_word_comparison_finds_a_copied_sentence_whatever_its_markup():
    seed = runs(words("Sixteen bits mean half the memory: 14 GB instead of 28, as the table shows."))
    page = words("As *sixteen* bits mean half\nthe `memory` (14 GB instead of 28), as the table shows!")
    assert copied(page, seed) == ["sixteen bits mean half the memory 14 gb instead of 28 as the table shows"]
    assert copied(words("Half the memory: 14 GB, not 28."), seed) == []


def test_the_fingerprint_is_the_whole_seed(seed_runs):
    # The seed lesson is about 1,500 words: as many runs, none of its text.
    assert len(seed_runs) > 1000, (
        f"{FINGERPRINT} holds {len(seed_runs)} runs: run scripts/seed_fingerprint.py"
    )
    assert all(len(run) == 12 and set(run) <= set("0123456789abcdef") for run in seed_runs)


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_no_page_repeats_ten_words_of_the_seed(seed_runs, page):
    hits = copied(words(page.read_text(encoding="utf-8")), seed_runs)
    assert not hits, (
        f"docs/{page.name} repeats the seed lesson word for word; say it in the "
        f"project's own words:\n" + "\n".join(f"  - {h}" for h in hits)
    )
