"""The figures of the lesson "Making it fast", drawn with matplotlib from its recordings.

Declared in pyproject.toml (``figures = "scripts/figures/making_it_fast.py"``);
``python scripts/make_figures.py`` draws them into docs/figures/, and the tests check
that each was drawn from the data the recordings hold now. Each figure is a pair: a
function that reads its data from the recordings, and one that draws that data.
"""

from __future__ import annotations

import re

from recorded.model.machines import Machine
from recorded.model.store import Store
from recorded.pages.figures import NUMBER, Figure, find, fresh_stdout, machine_label, new_figure, search

LESSON = "making_it_fast"


# -- data ----------------------------------------------------------------------------------


def first_cpu_recording(store: Store, snippet: str) -> tuple[list[str], Machine] | None:
    """The first CPU target's fresh recording of the snippet, in tab order."""
    for target in store.targets:
        if not target.needs_device and (got := fresh_stdout(store, f"{LESSON}/{snippet}", target.name)):
            return got
    return None


def bit_layouts_data(store: Store) -> dict:
    got = first_cpu_recording(store, "03_float16_vs_bfloat16.py")
    if got is None:
        raise LookupError("03_float16_vs_bfloat16.py has no fresh recording on any CPU target")
    lines, _ = got
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
        got = (
            fresh_stdout(store, f"{LESSON}/{snippet}", target)
            if target
            else first_cpu_recording(store, snippet)
        )
        if got:
            lines, _ = got
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


def timing_data(store: Store) -> dict:
    rows = []
    for snippet in ("06_measure_cpu.py", "07_measure_cuda.py"):
        for target in store.targets:
            try:
                got = fresh_stdout(store, f"{LESSON}/{snippet}", target.name)
            except (OSError, ValueError):
                got = None
            if not got:
                continue
            lines, machine = got
            kind = "GPU" if snippet.startswith("07") else "CPU"
            row: dict[str, object] = {"label": f"{machine_label(target, machine)} ({kind})"}
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
    return {"rows": rows}


def worked_example_data(store: Store) -> dict:
    pattern = re.compile(
        rf"^(.+?)\s+\| epoch {NUMBER} s \(median[^)]*\) \| first epoch {NUMBER} s \| peak {NUMBER} MB (.+?) "
        rf"\| accuracy {NUMBER}%"
    )
    runs = []
    for target in store.targets:
        got = fresh_stdout(store, f"{LESSON}/10_worked_example.py", target.name)
        if not got:
            continue
        lines, machine = got
        for line in lines:
            if m := pattern.match(line):
                runs.append(
                    {
                        "machine": machine_label(target, machine),
                        "config": m[1],
                        "epoch_s": float(m[2]),
                        "peak_mb": float(m[4]),
                        "memory": m[5],
                        "accuracy": float(m[6]),
                    }
                )
    return {"runs": runs}


# -- drawing -------------------------------------------------------------------------------

COLOURS = {"sign": "#7f7f7f", "exponent": "#d95f02", "mantissa": "#1b9e77"}


def draw_bit_layouts(data: dict):
    fig, ax = new_figure(8, 2.8)
    names = list(data["formats"])
    for row, name in enumerate(names):
        f = data["formats"][name]
        y = len(names) - 1 - row
        x = 0
        for part, bits in (("sign", 1), ("exponent", f["exponent"]), ("mantissa", f["mantissa"])):
            ax.barh(y, bits, left=x, color=COLOURS[part], edgecolor="white", height=0.6)
            if bits >= 3:
                label = f"{part} {bits}" if bits >= 7 else f"{part[:3]} {bits}"
                ax.text(x + bits / 2, y, label, ha="center", va="center", color="white")
            x += bits
        ax.text(33, y, f"{name}: 7B parameters = {f['gb_for_7b']} GB", va="center")
    ax.set_yticks(range(len(names)), names[::-1])
    ax.set_xlim(0, 50)
    ax.set_xticks([0, 8, 16, 24, 32])
    ax.set_xlabel("bits")
    ax.spines[["top", "right", "left"]].set_visible(False)
    ax.set_title("Where the bits go, and what 7 billion weights weigh")
    return fig


def draw_flow(data: dict):
    fig, ax = new_figure(8, 3.4)
    ax.set_axis_off()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 4)
    steps = data["steps"]
    cpu = steps.get("bfloat16 on a CPU", {})
    compute = cpu.get("activations computed in") or "bfloat16"
    boxes = [
        (0.2, 2.4, "weights\nfloat32\n(the model's own)", "#1b9e77"),
        (2.7, 2.4, f"forward pass\n16-bit ({compute}\nor float16)", "#d95f02"),
        (5.2, 2.4, "loss\nfloat32", "#1b9e77"),
        (7.7, 2.4, "× scale\n(float16 only)", "#7570b3"),
        (7.7, 0.3, "backward\ngradients scaled", "#7570b3"),
        (5.2, 0.3, "÷ scale, skip if\ninf/nan; float32", "#7570b3"),
        (2.7, 0.3, "optimizer step\non float32 weights", "#1b9e77"),
    ]
    from matplotlib.patches import FancyBboxPatch

    for x, y, text, colour in boxes:
        ax.add_patch(
            FancyBboxPatch(
                (x, y), 2.1, 1.3, boxstyle="round,pad=0.05", facecolor=colour, alpha=0.15, edgecolor=colour
            )
        )
        ax.text(x + 1.05, y + 0.65, text, ha="center", va="center")
    arrows = [
        ((2.3, 3.05), (2.7, 3.05)),
        ((4.8, 3.05), (5.2, 3.05)),
        ((7.3, 3.05), (7.7, 3.05)),
        ((8.75, 2.4), (8.75, 1.6)),
        ((7.7, 0.95), (7.3, 0.95)),
        ((5.2, 0.95), (4.8, 0.95)),
        ((2.7, 0.95), (1.25, 2.4)),
    ]
    for start, end in arrows:
        ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "lw": 1.5})
    ax.set_title("One mixed-precision training step")
    return fig


def draw_timing(data: dict):
    fig, ax = new_figure(8, 1.6 + 0.7 * max(1, len(data["rows"])))
    rows = data["rows"]
    if not rows:
        ax.text(0.5, 0.5, "no fresh timing recordings yet", ha="center", va="center")
        ax.set_axis_off()
        return fig

    def right_end(row, name):  # where a bar, or its IQR whisker, ends
        return row[f"{name}_iqr"][1] if row[f"{name}_iqr"] else row[f"{name}_ms"]

    for i, row in enumerate(rows):
        y = len(rows) - 1 - i
        for name, dy, colour, legend in (
            ("float32", 0.18, "#7f7f7f", "float32"),
            ("bfloat16", -0.18, "#d95f02", "bfloat16 autocast"),
        ):
            value, iqr = row[f"{name}_ms"], row[f"{name}_iqr"]
            # The whisker spans the interquartile range: where the middle half of the timings fell.
            xerr = [[value - iqr[0]], [iqr[1] - value]] if iqr else None
            ax.barh(
                y + dy,
                value,
                height=0.34,
                color=colour,
                xerr=xerr,
                capsize=3,
                error_kw={"elinewidth": 1, "ecolor": "black"},
                label=legend if i == 0 else None,
            )
            ax.text(right_end(row, name), y + dy, f" {value:g} ms", va="center")
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows][::-1])
    ax.set_xlabel("time per batch, ms (median, whiskers: interquartile range; shorter is faster)")
    ax.set_xlim(0, max(max(right_end(r, "float32"), right_end(r, "bfloat16")) for r in rows) * 1.3)
    # Above the bars, where no bar's label can run into it.
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1), ncols=2, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title("float32 against bfloat16, per recorded machine and target", pad=26)
    return fig


def draw_worked_example(data: dict):
    fig, axes = new_figure(9, 3.2, ncols=3)
    runs = data["runs"]
    configs = list(dict.fromkeys(r["config"] for r in runs))
    machines = list(dict.fromkeys(r["machine"] for r in runs))
    width = 0.8 / max(1, len(machines))
    for ax, key, title in zip(
        axes,
        ("epoch_s", "peak_mb", "accuracy"),
        ("median epoch, s (log scale)", "peak memory, MB", "held-out accuracy, %"),
    ):
        if key == "epoch_s":
            ax.set_yscale("log")  # float16 on a CPU without float16 arithmetic is 20x slower or more
        for j, machine in enumerate(machines):
            xs, ys = [], []
            for i, config in enumerate(configs):
                r = next((r for r in runs if r["machine"] == machine and r["config"] == config), None)
                if r:
                    xs.append(i + (j - (len(machines) - 1) / 2) * width)
                    ys.append(r[key])
            bars = ax.bar(xs, ys, width=width, label=machine if ax is axes[0] else None)
            ax.bar_label(bars, fmt="%.3g", fontsize=7)
        ax.set_xticks(
            range(len(configs)),
            [c.replace(" + ", "\n+ ").replace(" autocast", "\nautocast") for c in configs],
            fontsize=8,
        )
        ax.set_title(title)
        ax.spines[["top", "right"]].set_visible(False)
    if machines:
        fig.legend(loc="outside lower center", ncols=len(machines), frameon=False, fontsize=8)
    fig.suptitle("Worked example: one training run, measured per configuration and machine")
    return fig


FIGURES = (
    Figure("bit-layouts", bit_layouts_data, draw_bit_layouts),
    Figure("mixed-precision-flow", flow_data, draw_flow),
    Figure("bf16-vs-fp32", timing_data, draw_timing),
    Figure("worked-example", worked_example_data, draw_worked_example),
)
