# /// script
# requires-python = ">=3.11"
# dependencies = ["numpy"]
# [tool.recorded]
# timing = true
# ///
"""Sum of squares of a million numbers: a Python loop against one NumPy call, and two NumPy calls
against each other."""

# region imports
import math
import os
import statistics
import timeit

# endregion

# region the timing rule: spread() and verdict()
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
# endregion

# region one thread for NumPy's libraries
# One thread for every library NumPy may hand work to (OpenBLAS, MKL, Apple's Accelerate), set
# before NumPy loads them: every line below then runs on one core, so no speed-up comes from a
# second one.
for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[name] = "1"

import numpy as np  # noqa: E402 (after the thread settings, on purpose)

# endregion

values = np.random.default_rng(seed=0).normal(size=1_000_000)
numbers = values.tolist()  # plain floats for the loop, made before any timing

def python_loop():
    total = 0.0
    for v in numbers:
        total += v * v
    return total

def multiply_then_sum():
    return float((values * values).sum())  # two passes: a temporary array

def dot():
    return float(values @ values)  # one pass, no temporary (BLAS)

loop_result = python_loop()  # each adds in its own order: use a tolerance
same = all(math.isclose(loop_result, f(), rel_tol=1e-9) for f in (multiply_then_sum, dot))
print("threads: 1")
print("same result (relative tolerance 1e-9):", same)

# region timings_ms(): a warm-up, then repeats
def timings_ms(fn, repeat):
    fn()  # warm-up (the check above already called each once; one more costs nothing)
    return [t * 1000 for t in timeit.repeat(fn, number=1, repeat=repeat)]
# endregion

loop_ms = timings_ms(python_loop, repeat=15)
two_pass_ms = timings_ms(multiply_then_sum, repeat=100)
dot_ms = timings_ms(dot, repeat=100)

# region print the medians, IQRs and speed-ups
def show(label, samples, digits):
    median, q1, q3 = spread(samples)
    print(f"{label} {median:.{digits}f} ms (median of {len(samples)}, IQR {q1:.{digits}f}-{q3:.{digits}f})")

show("python loop:            ", loop_ms, 1)
show("(values * values).sum():", two_pass_ms, 2)
show("values @ values:        ", dot_ms, 2)
print(f"speed-up, loop to (values * values).sum(): {spread(loop_ms)[0] / spread(two_pass_ms)[0]:.0f}x")
print(f"speed-up, (values * values).sum() to values @ values: "
      f"{spread(two_pass_ms)[0] / spread(dot_ms)[0]:.1f}x")
# endregion
print("(values * values).sum() vs python loop here:", verdict(loop_ms, two_pass_ms))
print("values @ values vs (values * values).sum() here:", verdict(two_pass_ms, dot_ms))
