# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# requires = ["cuda"]
# timing = true
# ///
# region imports; spread(), verdict(), turns(); GPU check; TF32 switch; the model; four variants
"""The same comparison on a GPU, where the clock may only be read once the GPU has finished,
with TF32 beside it: float32 matrix products on the tensor cores, at reduced precision."""

import math
import random
import statistics
import time

import torch
from torch import nn

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


if not torch.cuda.is_available():
    raise SystemExit("This example needs an NVIDIA GPU: torch.cuda.is_available() is False.")


def matmul_precision():
    """How float32 matrix products run: "highest" is true float32, "high" allows TF32."""
    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError:  # torch >= 2.9 refuses when the old and new settings disagree
        return torch.backends.cuda.matmul.fp32_precision


def conv_precision():
    """How cuDNN runs float32 convolutions: "tf32" or "ieee" (true float32)."""
    if hasattr(torch.backends.cudnn, "conv"):  # the setting since torch 2.9
        return torch.backends.cudnn.conv.fp32_precision
    return "tf32" if torch.backends.cudnn.allow_tf32 else "ieee"


# Read before anything below changes them: what a fresh process gets.
default_matmul_precision = matmul_precision()
default_conv_precision = conv_precision()


def use_tf32(on):
    """Let float32 matrix products run on TF32 tensor cores (on) or in true float32 (off)."""
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):  # the setting since torch 2.9
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
    else:
        torch.set_float32_matmul_precision("high" if on else "highest")


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda().eval()
batch = torch.randn(2048, 4096, device="cuda")


def float32_forward():
    return model(batch)


def bfloat16_forward():
    # The timed call must run *inside* autocast, or it measures float32 again.
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(batch)


variants = {  # name: (what to run, TF32 allowed)
    "float32": (float32_forward, False),
    "TF32": (float32_forward, True),
    "bfloat16": (bfloat16_forward, False),
    "float32 again": (float32_forward, False),  # A/A: the same code
}
CALLS, SAMPLES = 5, 32  # 32 rounds: 8 cycles of the four variants' orders


# endregion
def time_block(fn):
    """Milliseconds per call over a block of calls, the clock read only after the GPU is done."""
    torch.cuda.synchronize()  # start from an idle GPU
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()  # returns once the kernels are queued, long before they finish
    torch.cuda.synchronize()  # wait for the work, not just its launch
    return (time.perf_counter() - start) / CALLS * 1000


# region warm-up; 32 rounds in the order turns() gives; print the medians, IQRs and verdicts
times_ms = {name: [] for name in variants}
with torch.inference_mode():
    for fn, tf32 in variants.values():  # warm-up: kernel selection, memory pool growth
        use_tf32(tf32)
        for _ in range(3):
            fn()
    for order in turns(list(variants), SAMPLES):  # taking turns in a changing order
        for name in order:
            fn, tf32 = variants[name]
            use_tf32(tf32)
            times_ms[name].append(time_block(fn))
    use_tf32(False)
    out_dtype = bfloat16_forward().dtype

print("threads:", torch.get_num_threads())
print("GPU:", torch.cuda.get_device_name())
print("float32 matmul precision by default:", default_matmul_precision)
print("cuDNN float32 convolutions by default:", default_conv_precision)
print("output dtype under autocast:", out_dtype)
for name, samples in times_ms.items():
    median, q1, q3 = spread(samples)
    print(f"{name + ':':9} {median:.2f} ms per batch (median of {len(samples)}, IQR {q1:.2f}-{q3:.2f})")
float32_median = statistics.median(times_ms["float32"])
print(f"TF32 time / float32 time: {statistics.median(times_ms['TF32']) / float32_median:.2f}")
print("TF32 vs fp32 here:", verdict(times_ms["float32"], times_ms["TF32"]))
print(f"bfloat16 time / float32 time: {statistics.median(times_ms['bfloat16']) / float32_median:.2f}")
print("bf16 vs fp32 here:", verdict(times_ms["float32"], times_ms["bfloat16"]))
print("A/A, float32 vs float32 here:", verdict(times_ms["float32"], times_ms["float32 again"]))
# endregion
