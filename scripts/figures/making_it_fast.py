"""The figures of the lesson "Making it fast", drawn with matplotlib from its recordings.

Declared in pyproject.toml (``figures = "scripts/figures/making_it_fast.py"``);
``python scripts/make_figures.py`` draws them into docs/figures/, and the tests check
that each was drawn from the data the recordings hold now. Each figure is a pair: a
function that reads its data from the recordings, and one that draws that data.
"""

from __future__ import annotations

import math
import re

from recorded.model.store import Store
from recorded.pages.figures import (
    FONT_SIZE,
    NUMBER,
    Figure,
    Printed,
    find,
    new_figure,
    printed,
    search,
)

LESSON = "making_it_fast"


# -- data ----------------------------------------------------------------------------------


def first_cpu_recording(store: Store, snippet: str) -> Printed | None:
    """The first CPU target's recording of the snippet, in tab order: a fresh one if any."""
    shown = [
        got
        for target in store.targets
        if not target.needs_device and (got := printed(store, f"{LESSON}/{snippet}", target.name))
    ]
    return next((got for got in shown if not got.earlier), shown[0] if shown else None)


def labelled(target, got: Printed, cpu: bool = False) -> str:
    """The machine by its tab's name, as the pages name it, marked as the pages mark an
    earlier version's output; with ``cpu``, a device machine's host CPU."""
    name = f"{target.tab}'s host CPU" if cpu and target.needs_device else target.tab
    return name + (", earlier code" if got.earlier else "")


def bit_layouts_data(store: Store) -> dict:
    got = first_cpu_recording(store, "03_float16_vs_bfloat16.py")
    if got is None:
        raise LookupError("03_float16_vs_bfloat16.py has no recording on any CPU target")
    lines = got.lines
    formats = {}
    for name in ("float32", "float16", "bfloat16"):
        where = "03_float16_vs_bfloat16.py"
        m = find(rf"^\s*{name}: (\d+) bits = 1 sign \+ (\d+) exponent \+ (\d+) mantissa", lines, where)
        gb = find(rf"^7B parameters in {name}: (\d+) GB", lines, where)
        formats[name] = {"exponent": int(m[2]), "mantissa": int(m[3]), "gb_for_7b": int(gb[1])}
    return {"formats": formats}


def flow_data(store: Store) -> dict:
    """The dtypes each part of a mixed-precision step ran in, as recorded."""
    steps = {}
    for snippet, target, key in (
        ("05_mixed_precision_cpu.py", None, "bfloat16 on a CPU"),
        ("04_mixed_precision_cuda.py", "cuda", "float16 on a GPU"),
    ):
        got = printed(store, f"{LESSON}/{snippet}", target) if target else first_cpu_recording(store, snippet)
        if got:
            lines = got.lines
            steps[key] = {
                # "master weights kept in": the label of recordings made before it was renamed
                what: m[1] if (m := search(rf"^(?:master )?{what}: torch\.(\w+)", lines)) else None
                for what in (
                    "activations computed in",
                    "loss computed in",
                    "weights kept in",
                    "gradients reach the optimizer in",
                )
            }
    return {"steps": steps}


#: The timing snippets, and the kind of processor each times.
TIMED = (("06_measure_cpu.py", "CPU"), ("07_measure_cuda.py", "GPU"))


def batch_size(store: Store, snippet: str) -> int | None:
    """The batch a timing snippet times: N in its ``batch = torch.randn(N, ...)``."""
    try:
        code = (store.snippets_dir / LESSON / snippet).read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^batch = torch\.randn\((\d+),", code, re.MULTILINE)
    return int(m[1]) if m else None


def timing_data(store: Store) -> dict:
    """Each machine's float32 and bfloat16 medians and IQRs, per timing snippet, and the batch
    each snippet times (the GPU's is not the CPU's: they share no axis)."""
    rows = []
    for snippet, kind in TIMED:
        for target in store.targets:
            try:
                got = printed(store, f"{LESSON}/{snippet}", target.name)
            except (OSError, ValueError):
                got = None
            if not got:
                continue
            lines = got.lines
            label = labelled(target, got, cpu=kind == "CPU")
            row: dict[str, object] = {"kind": kind, "label": label}
            for name in ("float32", "bfloat16"):
                # "float32:  12.70 ms per batch (median of 30, IQR 12.50-13.00)"; the IQR may be absent.
                m = find(
                    rf"^{name}:\s+{NUMBER} ms per batch(?: \(median of \d+, IQR {NUMBER}-{NUMBER}\))?",
                    lines,
                    f"{snippet} on {target.name}",
                )
                row[f"{name}_ms"] = float(m[1])
                row[f"{name}_iqr"] = [float(m[2]), float(m[3])] if m[2] else None
            rows.append(row)
    return {"rows": rows, "batch": {kind: batch_size(store, snippet) for snippet, kind in TIMED}}


def worked_example_data(store: Store) -> dict:
    pattern = re.compile(
        rf"^(.+?)\s+\| epoch {NUMBER} s \(median[^)]*\) \| first epoch {NUMBER} s \| peak {NUMBER} MB (.+?) "
        rf"\| accuracy {NUMBER}%"
    )
    runs = []
    for target in store.targets:
        got = printed(store, f"{LESSON}/10_worked_example.py", target.name)
        if not got:
            continue
        for line in got.lines:
            if m := pattern.match(line):
                runs.append(
                    {
                        "machine": labelled(target, got),
                        "config": m[1],
                        "epoch_s": float(m[2]),
                        "peak_mb": float(m[4]),
                        "memory": m[5],
                        "accuracy": float(m[6]),
                    }
                )
    return {"runs": runs}


# -- drawing -------------------------------------------------------------------------------
# Every figure is WIDTH wide (recorded.pages.figures) with its panels stacked, so that its
# text is at least 11 CSS px on a desktop and legible on a phone; labels sit above bars or
# beside them, never on a crowded axis.

COLOURS = {"sign": "#7f7f7f", "exponent": "#d95f02", "mantissa": "#1b9e77"}
DTYPE_COLOURS = {"float32": "#7f7f7f", "bfloat16": "#d95f02"}
MACHINE_COLOURS = ("#1f77b4", "#d95f02", "#7570b3", "#1b9e77", "#e7298a", "#66a61e")


def beside(ax, x: float, y: float, text: str, **kw):
    """A value label just right of a bar's end (or its whisker's)."""
    return ax.annotate(text, (x, y), xytext=(4, 0), textcoords="offset points", va="center", **kw)


def room_for(ax, labels: list) -> None:
    """Widen ax's x range until the labels right of the bars end inside it."""
    fig = ax.get_figure()
    for _ in range(10):
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        right = max(t.get_window_extent(renderer).x1 for t in labels)
        edge = ax.get_window_extent(renderer).x1
        if right <= edge - 2:
            return
        lo, _ = ax.get_xlim()
        ax.set_xlim(lo, ax.transData.inverted().transform((right + 8, 0))[0])


def heading(fig, title: str, handles: list, ncols: int) -> None:
    """The figure's title with its legend right under it, above the panels, in as many of
    ncols columns as fit the figure's width. (A suptitle and an outside legend are placed
    independently by the layout, and may overlap.)"""
    for cols in range(ncols, 0, -1):
        legend = fig.legend(
            handles=handles,
            loc="outside upper center",
            ncols=cols,
            frameon=False,
            title=title,
            title_fontproperties={"size": FONT_SIZE + 1},
        )
        fig.draw_without_rendering()
        if cols == 1 or legend.get_window_extent().width <= fig.bbox.width - 4:
            return
        legend.remove()


def fit_text(ax, x: float, y: float, width: float, candidates: list[str], **kw) -> None:
    """The first of the candidates that fits in width (data units) centred on x, or none."""
    fig = ax.get_figure()
    text = ax.text(x, y, "", ha="center", va="center", **kw)
    for candidate in candidates:
        text.set_text(candidate)
        fig.draw_without_rendering()
        left, right = ax.transData.transform([(x - width / 2, y), (x + width / 2, y)])[:, 0]
        if text.get_window_extent(fig.canvas.get_renderer()).width <= right - left - 6:
            return
    text.set_text("")


def draw_bit_layouts(data: dict):
    names = list(data["formats"])
    fig, ax = new_figure(1.5 + 0.9 * len(names))
    from matplotlib.patches import Patch

    pitch = 1.15  # a format's row: its name, then its bar
    ax.set_ylim(-(len(names) - 1) * pitch - 0.4, 0.65)
    ax.set_xlim(0, 32)
    for row, name in enumerate(names):
        f = data["formats"][name]
        y = -row * pitch
        x = 0
        for part, bits in (("sign", 1), ("exponent", f["exponent"]), ("mantissa", f["mantissa"])):
            ax.barh(y, bits, left=x, color=COLOURS[part], edgecolor="white", height=0.5)
            fit_text(
                ax, x + bits / 2, y, bits, [f"{part} {bits}", f"{part[:3]}. {bits}", f"{bits}"], color="white"
            )
            x += bits
        # Its name and weight above its bar, where the narrow figure has room.
        ax.text(0, y + 0.32, f"{name}: {x} bits; 7B weights = {f['gb_for_7b']} GB", va="bottom")
    ax.set_yticks([])
    ax.set_xticks([0, 8, 16, 24, 32])
    ax.set_xlabel("bits")
    ax.spines[["top", "right", "left"]].set_visible(False)
    heading(
        fig,
        "Where the bits go, and what 7 billion weights weigh",
        [Patch(color=c, label=part) for part, c in COLOURS.items()],
        ncols=3,
    )
    return fig


def draw_flow(data: dict):
    fig, ax = new_figure(5.0)
    ax.set_axis_off()
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.1, 6.1)
    steps = data["steps"]
    cpu = steps.get("bfloat16 on a CPU", {})
    compute = cpu.get("activations computed in") or "bfloat16"
    green, orange, purple = "#1b9e77", "#d95f02", "#7570b3"
    w, h = 4.5, 1.1  # a box; the cycle runs down the left column and up the right one
    left, right = 0.1, 5.4
    rows = [4.9, 3.3, 1.7, 0.1]  # the bottom edge of each row's boxes
    boxes = {
        "weights": (left, rows[0], "weights: float32\n(the model's own)", green),
        "forward": (left, rows[1], f"forward pass in 16 bits\n({compute} or float16)", orange),
        "loss": (left, rows[2], "loss\nfloat32", green),
        "scale": (left, rows[3], "× scale\n(float16 only)", purple),
        "backward": (right, rows[3], "backward:\ngradients scaled", purple),
        "unscale": (right, (rows[1] + rows[2]) / 2, "÷ scale, in float32;\nskip if inf or nan", purple),
        "step": (right, rows[0], "optimizer step\non float32 weights", green),
    }
    from matplotlib.patches import FancyBboxPatch, Patch

    for x, y, text, colour in boxes.values():
        ax.add_patch(
            FancyBboxPatch(
                (x, y), w, h, boxstyle="round,pad=0.05", facecolor=colour, alpha=0.15, edgecolor=colour
            )
        )
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center")

    def edge(box: str, side: str) -> tuple[float, float]:
        x, y, _, _ = boxes[box]
        return {
            "top": (x + w / 2, y + h + 0.08),
            "bottom": (x + w / 2, y - 0.08),
            "left": (x - 0.08, y + h / 2),
            "right": (x + w + 0.08, y + h / 2),
        }[side]

    arrows = [
        (edge("weights", "bottom"), edge("forward", "top")),
        (edge("forward", "bottom"), edge("loss", "top")),
        (edge("loss", "bottom"), edge("scale", "top")),
        (edge("scale", "right"), edge("backward", "left")),
        (edge("backward", "top"), edge("unscale", "bottom")),
        (edge("unscale", "top"), edge("step", "bottom")),
        (edge("step", "left"), edge("weights", "right")),
    ]
    for start, end in arrows:
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "lw": 1.5, "color": "#333333"})
    fig.legend(
        handles=[
            Patch(facecolor=c, alpha=0.3, edgecolor=c, label=t)
            for c, t in ((green, "float32"), (orange, "16-bit"), (purple, "loss scaling"))
        ],
        loc="outside lower center",
        ncols=3,
        frameon=False,
    )
    fig.suptitle("One mixed-precision training step")
    return fig


def draw_timing(data: dict):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter

    rows = data["rows"]
    batch = data.get("batch", {})
    panels = [(kind, [r for r in rows if r.get("kind") == kind]) for _, kind in TIMED]
    # Each machine 0.85 in; a panel with none is a line that says so.
    sizes = [0.85 * len(p) if p else 0.3 for _, p in panels]
    fig, axes = new_figure(
        1.1 + sum(size + (0.8 if size > 0.3 else 0.3) for size in sizes), nrows=2, height_ratios=sizes
    )
    step = 3.4  # a machine's rows: its name, then its float32 bar and its bfloat16 bar

    def right_end(row: dict, name: str) -> float:  # where a bar, or its IQR whisker, ends
        return row[f"{name}_iqr"][1] if row[f"{name}_iqr"] else row[f"{name}_ms"]

    for ax, (kind, part) in zip(axes, panels):
        where = "CPUs, 06_measure_cpu.py" if kind == "CPU" else "GPU, 07_measure_cuda.py"
        title = f"{where}, batch {batch[kind]}" if batch.get(kind) else where
        ax.set_title(title, loc="left")
        if not part:
            ax.text(0.5, 0.5, f"no {kind} recording yet", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        lows = [
            min(r["float32_ms"], r["bfloat16_ms"], *(r["float32_iqr"] or []), *(r["bfloat16_iqr"] or []))
            for r in part
        ]
        highs = [max(right_end(r, "float32"), right_end(r, "bfloat16")) for r in part]
        log = max(highs) / min(lows) > 20  # a 200 ms bar beside 4 ms ones: each read on its own scale
        if log:
            ax.set_xscale("log")
            base = 10.0 ** math.floor(math.log10(min(lows) * 0.9))
        else:
            base = 0.0
        labels = []
        for i, row in enumerate(part):
            y = -i * step
            ax.text(0, y + 0.2, row["label"], va="center", transform=ax.get_yaxis_transform())
            for name, dy in (("float32", -0.95), ("bfloat16", -1.95)):
                value, iqr = row[f"{name}_ms"], row[f"{name}_iqr"]
                # The whisker spans the interquartile range: where the middle half of the timings fell.
                xerr = [[value - iqr[0]], [iqr[1] - value]] if iqr else None
                ax.barh(
                    y + dy,
                    value - base,
                    left=base,
                    height=0.85,
                    color=DTYPE_COLOURS[name],
                    xerr=None,
                )
                if xerr:
                    ax.errorbar(value, y + dy, xerr=xerr, fmt="none", ecolor="black", elinewidth=1, capsize=3)
                labels.append(beside(ax, right_end(row, name), y + dy, f"{value:.3g} ms"))
        ax.set_ylim(-(len(part) - 1) * step - 2.5, 0.8)
        ax.set_yticks([])
        ax.set_xlim(base, max(highs) * (3 if log else 1.15))
        if log:
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_xlabel("ms per batch" + (" (log scale)" if log else ""))
        ax.spines[["top", "right"]].set_visible(False)
        room_for(ax, labels)
    heading(
        fig,
        "float32 against bfloat16: median time per batch",
        [
            Patch(color=DTYPE_COLOURS["float32"], label="float32"),
            Patch(color=DTYPE_COLOURS["bfloat16"], label="bfloat16 autocast"),
            Line2D([], [], color="black", lw=1, marker="|", markersize=8, label="middle half (IQR)"),
        ],
        ncols=3,
    )
    return fig


def draw_worked_example(data: dict):
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator

    runs = data["runs"]
    configs = list(dict.fromkeys(r["config"] for r in runs))
    machines = list(dict.fromkeys(r["machine"] for r in runs))
    memories = list(dict.fromkeys(r["memory"] for r in runs))
    n = max(1, len(machines))
    # Inches per configuration in a panel: a bar and its label every 0.2 in, and room for a
    # two-line name.
    group = max(0.45, 0.25 * n)
    height = 0.6 + 0.25 * n + 3 * (0.8 + max(1, len(configs)) * group) + 0.2 * (len(memories) > 1)
    fig, axes = new_figure(height, nrows=3)
    bar = 0.8 / n
    memory = "Peak memory, MB" + (
        f" ({memories[0]})" if len(memories) == 1 else "\n(" + "; ".join(memories) + ")"
    )
    for ax, key, title, fmt in zip(
        axes,
        ("epoch_s", "peak_mb", "accuracy"),
        ("Median epoch, s (log scale)", memory, "Held-out accuracy, %"),
        ("{:.2g}", "{:.0f}", "{:.1f}"),
    ):
        labels = []
        for j, machine in enumerate(machines):
            for i, config in enumerate(configs):
                r = next((r for r in runs if r["machine"] == machine and r["config"] == config), None)
                if r:
                    y = i + (j - (n - 1) / 2) * bar
                    ax.barh(y, r[key], height=bar * 0.9, color=MACHINE_COLOURS[j % len(MACHINE_COLOURS)])
                    labels.append(beside(ax, r[key], y, fmt.format(r[key])))
        ax.set_yticks(
            range(len(configs)),
            [c.replace(" + ", "\n+ ").replace("bfloat16 autocast", "bfloat16\nautocast") for c in configs],
        )
        ax.set_ylim(len(configs) - 0.5, -0.5)  # the first configuration on top
        ax.set_title(title, loc="left")
        ax.spines[["top", "right"]].set_visible(False)
        values = [r[key] for r in runs]
        if key == "epoch_s":
            ax.set_xscale("log")  # float16 on a CPU without float16 arithmetic is 20x slower or more
            ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 3.0)))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
            if values:
                ax.set_xlim(min(values) / 2, max(values) * 1.5)
        elif key == "accuracy":
            ax.set_xlim(0, 100)
        if labels:
            room_for(ax, labels)
    title = "Worked example: one training run per configuration"
    if machines:
        colours = [
            Patch(color=MACHINE_COLOURS[j % len(MACHINE_COLOURS)], label=m) for j, m in enumerate(machines)
        ]
        heading(fig, title, colours, ncols=len(colours))
    else:
        fig.suptitle(title)
    return fig


FIGURES = (
    Figure("bit-layouts", bit_layouts_data, draw_bit_layouts),
    Figure("mixed-precision-flow", flow_data, draw_flow),
    Figure("bf16-vs-fp32", timing_data, draw_timing),
    Figure("worked-example", worked_example_data, draw_worked_example),
)
