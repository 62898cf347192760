# /// script
# requires-python = ">=3.11"
# dependencies = ["numpy"]
# [tool.recorded]
# timing = true
# ///
"""Sum of squares of a million numbers: a Python loop against two NumPy calls."""

# region set-up: imports, the timing rule, one thread for NumPy
import math
import os
import random
import statistics
import time

# The timing rule: spread(), verdict(), turns().
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


# One thread for every library NumPy may hand work to (OpenBLAS, MKL, Apple's Accelerate), set
# before NumPy loads them: every line below then runs on one core, so no speed-up comes from a
# second one.
for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[name] = "1"

import numpy as np  # noqa: E402 (after the thread settings, on purpose)

# endregion

values = np.random.default_rng(seed=0).normal(size=1_000_000)
# region python_loop(): total += v * v, one number at a time
numbers = values.tolist()  # plain floats for the loop, made before any timing


def python_loop():
    total = 0.0
    for v in numbers:
        total += v * v
    return total


# endregion


def multiply_then_sum():
    return float((values * values).sum())  # two passes: a temporary array


def dot():
    return float(values @ values)  # one pass, no temporary (BLAS)


# region check the three agree, then time them in turns and print
loop_result = python_loop()  # each adds in its own order: use a tolerance
same = all(math.isclose(loop_result, f(), rel_tol=1e-9) for f in (multiply_then_sum, dot))
print("threads: 1")
print("same result (relative tolerance 1e-9):", same)


# One timed call, in milliseconds.
def ms(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


# Each ran once in the check above: that was its warm-up. Then 18 rounds in a changing order:
# the loop once a round, each NumPy call 7 times (each is many times quicker).
calls = {python_loop: 1, multiply_then_sum: 7, dot: 7}
timings = {fn: [] for fn in calls}
for order in turns(list(calls), rounds=18):
    for fn in order:
        timings[fn] += [ms(fn) for _ in range(calls[fn])]
loop_ms, two_pass_ms, dot_ms = timings.values()


# The medians, IQRs and speed-ups, then the verdicts.
def show(label, samples, digits):
    median, q1, q3 = spread(samples)
    print(f"{label} {median:.{digits}f} ms (median of {len(samples)}, IQR {q1:.{digits}f}-{q3:.{digits}f})")


show("python loop:            ", loop_ms, 1)
show("(values * values).sum():", two_pass_ms, 2)
show("values @ values:        ", dot_ms, 2)
print(f"speed-up, loop to (values * values).sum(): {spread(loop_ms)[0] / spread(two_pass_ms)[0]:.0f}x")
print(
    f"speed-up, (values * values).sum() to values @ values: {spread(two_pass_ms)[0] / spread(dot_ms)[0]:.1f}x"
)
print("(values * values).sum() vs python loop here:", verdict(loop_ms, two_pass_ms))
print("values @ values vs (values * values).sum() here:", verdict(two_pass_ms, dot_ms))
# endregion
