"""The figures are drawn from the recordings: a re-recording must be followed by a redraw
(tests/pages/test_generated.py checks the committed ones), and each is shown with alt text."""

import shutil
from pathlib import Path

import pytest

from recorded.config import lessons
from recorded.model.store import Store
from recorded.pages.figures import WIDTH, lesson_figures, out_of_date, path

ROOT = Path(__file__).resolve().parents[2]
LESSONS = [lesson for lesson in lessons.load(ROOT).values() if lesson.figures]
FIGURES = [(lesson, fig) for lesson in LESSONS for fig in lesson_figures(ROOT, lesson)]


#: The smallest font a figure may use, in points: 14.7 px on a desktop, 10.5 px on a phone.
SMALLEST = 11


def drawn_texts(fig) -> list:
    """The texts a drawn figure shows: not the labels of ticks outside their axis's view, nor
    an axis's labels where its axes are switched off."""
    from matplotlib.text import Text

    fig.draw_without_rendering()
    hidden: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not ax.axison or not lo - 1e-9 * abs(hi - lo) <= tick.get_loc() <= hi * (1 + 1e-9):
                    hidden.update({id(tick.label1), id(tick.label2)})
            if not ax.axison:
                hidden.update({id(axis.label), id(axis.offsetText)})
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and id(t) not in hidden and t.get_figure(root=True) is fig
    ]


def text_problems(fig) -> list[str]:
    """What a reader would trip on in a drawn figure: text smaller than SMALLEST, text cut
    by the figure's edge, and texts that overlap each other (one line each)."""
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    edge = fig.bbox
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    boxes = [(t, b) for t, b in boxes if b.width > 0 and b.height > 0]
    problems = []
    for t, b in boxes:
        name = repr(t.get_text())
        if t.get_fontsize() < SMALLEST:
            problems.append(f"{name} is {t.get_fontsize():g} pt, under {SMALLEST}")
        if b.x0 < edge.x0 - 0.5 or b.y0 < edge.y0 - 0.5 or b.x1 > edge.x1 + 0.5 or b.y1 > edge.y1 + 0.5:
            problems.append(f"{name} is cut by the figure's edge")
    for i, (t, b) in enumerate(boxes):
        for u, c in boxes[i + 1 :]:
            # Overlap beyond a point either way: line boxes of stacked texts may touch.
            if min(b.x1, c.x1) - max(b.x0, c.x0) > 1 and min(b.y1, c.y1) - max(b.y0, c.y0) > 1:
                problems.append(f"{t.get_text()!r} overlaps {u.get_text()!r}")
    return problems


@pytest.mark.parametrize(("lesson", "fig"), FIGURES, ids=lambda x: getattr(x, "name", ""))
def test_every_figure_is_shown_with_alt_text(lesson, fig):
    file = path(ROOT / "docs" / lesson.figures_dir, fig).relative_to(ROOT / "docs").as_posix()
    pages = [(ROOT / "docs" / p).read_text(encoding="utf-8") for p in lesson.pages]
    uses = [line for text in pages for line in text.splitlines() if f"]({file})" in line]
    assert uses, f"no page of {lesson.name} shows {file}"
    for line in uses:
        alt = line.strip().removeprefix("![").split("](")[0]
        assert len(alt) > 40, f"{file} needs alt text that describes the picture, got {alt!r}"


@pytest.mark.parametrize(("lesson", "fig"), FIGURES, ids=lambda x: getattr(x, "name", ""))
def test_every_figure_reads_on_a_phone(lesson, fig):
    # WIDTH wide, shown at natural size on a desktop and scaled to a phone's column, its text
    # must be no smaller than SMALLEST, whole, and clear of other text.
    import matplotlib.pyplot as plt

    drawn = fig.draw(fig.data(Store(ROOT)))
    try:
        assert drawn.get_size_inches()[0] <= WIDTH
        assert text_problems(drawn) == []
    finally:
        plt.close(drawn)


def test_text_problems_finds_small_cut_and_overlapping_text():
    import matplotlib.pyplot as plt

    from recorded.pages.figures import new_figure

    drawn, ax = new_figure(2)
    try:
        ax.bar_label(ax.bar([0, 1], [80.13, 80.4]), fmt="%.3g", fontsize=7)  # the old worked example's
        ax.text(0.5, 0.5, "80 80", transform=ax.transAxes)
        ax.text(0.52, 0.5, "80.4", transform=ax.transAxes)
        ax.set_title("a title far wider than the figure it is the title of, cut at both ends" * 2)
        found = text_problems(drawn)
        assert any("under 11" in p for p in found)
        assert any("cut by the figure's edge" in p for p in found)
        assert "'80 80' overlaps '80.4'" in found
    finally:
        plt.close(drawn)


def test_a_changed_recording_makes_its_figure_out_of_date(tmp_path):
    # Copy the project's inputs, change one recorded number, and expect that figure flagged.
    (lesson,) = [lesson for lesson in LESSONS if lesson.name == "making_it_fast"]
    for part in ("snippets", "recordings"):
        shutil.copytree(ROOT / part, tmp_path / part)
    shutil.copytree(ROOT / "docs" / lesson.figures_dir, tmp_path / "figures")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)  # the targets
    store = Store(tmp_path)
    cpu = next(
        t.name
        for t in store.targets
        if not t.needs_device and store.read("making_it_fast/06_measure_cpu.py", t.name)
    )
    rec = store.read("making_it_fast/06_measure_cpu.py", cpu)
    assert rec is not None
    rec.stdout = [
        line.replace(" ms per batch", "1 ms per batch", 1) if line.startswith("float32:") else line
        for line in rec.stdout
    ]
    store.write(rec)
    stale = out_of_date(store, tmp_path / "figures", lesson_figures(ROOT, lesson))
    assert stale == [tmp_path / "figures" / "bf16-vs-fp32.svg"]
