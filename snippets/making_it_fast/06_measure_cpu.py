# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# timing = true
# ///
# region imports; spread(), verdict(), turns(); CPU checks; the model; one Timer a variant
"""Is bfloat16 faster than float32 on this CPU? Measure it with PyTorch's own timer, and let
the spread of the timings decide, not two medians."""

import math
import random
import statistics
from pathlib import Path

import torch
from torch import nn
from torch.utils import benchmark

MIN_EFFECT = 0.10  # below 10% is never called, however tight the spread


def spread(samples_ms):
    """Median and interquartile range (Q1, Q3) of repeated timings."""
    q1, median, q3 = statistics.quantiles(samples_ms, n=4, method="inclusive")
    return median, q1, q3


def verdict(baseline_ms, candidate_ms):
    """faster, slower or within noise: the candidate is faster only if its whole
    interquartile range lies below the baseline's and its median is at least 10% lower
    (slower: above, and at least 10% higher); anything else is within noise."""
    for name, samples in (("baseline", baseline_ms), ("candidate", candidate_ms)):
        if len(samples) < 5:
            raise ValueError(f"{name}: a verdict needs at least 5 timings, got {len(samples)}")
        if not all(isinstance(t, (int, float)) and math.isfinite(t) and t > 0 for t in samples):
            raise ValueError(f"{name}: timings must be positive finite numbers, got {samples!r}")
    b_med, b_q1, b_q3 = spread(baseline_ms)
    c_med, c_q1, c_q3 = spread(candidate_ms)
    ratio = c_med / b_med
    if c_q3 < b_q1 and ratio <= 1 - MIN_EFFECT:
        return "faster"
    if c_q1 > b_q3 and ratio >= 1 + MIN_EFFECT:
        return "slower"
    return "within noise"


def turns(names, rounds, seed=0):
    """The order of each round: a Williams design, so that over a full cycle each variant
    runs in each place, and right after each other one, equally often; which variant is
    which in it is shuffled once by a seed."""
    names = list(names)
    random.Random(seed).shuffle(names)
    n = len(names)
    first = [0] + [(k + 1) // 2 if k % 2 else n - k // 2 for k in range(1, n)]
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:  # an odd number of variants needs the mirror image too
        rows += [row[::-1] for row in rows]
    return [[names[x] for x in rows[r % len(rows)]] for r in range(rounds)]


def cpu_has(flag):
    """Whether the CPU advertises an instruction set (Linux only; else unknown)."""
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return "unknown"


def onednn_bf16():
    """Whether oneDNN, the library behind PyTorch's fast bfloat16 matrix products on x86,
    will run them on this CPU. It is a private PyTorch check, so it may be missing."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # absent, or renamed, in some builds: say so
        return "unknown"


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).eval()
batch = torch.randn(256, 1024)
threads = torch.get_num_threads()  # what PyTorch uses here by default

# bfloat16 runs *inside* autocast: outside, it would time float32 again.
statements = {
    "float32": "model(batch)",
    "bfloat16": "with torch.autocast('cpu', dtype=torch.bfloat16):\n    model(batch)",
    "float32 again": "model(batch)",  # A/A: the same code
}
timers = {
    name: benchmark.Timer(
        stmt=stmt,
        globals={"model": model, "batch": batch, "torch": torch},
        num_threads=threads,  # Timer's own default is 1 thread
        label="Linear-GELU-Linear forward, batch 256",
        sub_label=name,
        description=f"{threads} threads",
    )
    for name, stmt in statements.items()
}
ROUNDS = 6
rounds = {name: [] for name in timers}
# endregion
with torch.inference_mode():
    # Six short rounds in the order turns() gives: no variant always follows another.
    for order in turns(list(timers), ROUNDS):
        for name in order:
            rounds[name].append(timers[name].blocked_autorange(min_run_time=0.1))
    # region the dtype under autocast; merge each variant's rounds; print the features, medians, IQRs
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out_dtype = model(batch).dtype
results = {name: benchmark.Measurement.merge(measurements)[0] for name, measurements in rounds.items()}
times_ms = {name: [t * 1000 for t in m.times] for name, m in results.items()}

print("threads:", threads)
print("CPU capability PyTorch dispatches to:", torch.backends.cpu.get_cpu_capability())
print("oneDNN bfloat16 path available:", onednn_bf16())
print("CPU has AMX bfloat16 tiles:", cpu_has("amx_bf16"))
print("CPU has AVX-512 bfloat16 instructions:", cpu_has("avx512_bf16"))
print("output dtype under autocast:", out_dtype)
benchmark.Compare(list(results.values())).print()
for name, m in results.items():
    median, q1, q3 = spread(times_ms[name])  # the same median as m.median; m.iqr is q3 - q1
    print(f"{name + ':':9} {median:.2f} ms per batch (median of {len(m.times)}, IQR {q1:.2f}-{q3:.2f})")
print(f"bfloat16 time / float32 time: {results['bfloat16'].median / results['float32'].median:.2f}")
# endregion
print("bf16 vs fp32 here:", verdict(times_ms["float32"], times_ms["bfloat16"]))
print("A/A, float32 vs float32 here:", verdict(times_ms["float32"], times_ms["float32 again"]))
