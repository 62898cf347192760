# /// script
# requires-python = ">=3.11"
# dependencies = ["numpy"]
# ///
"""Sum of squares of a million numbers: a Python loop against one NumPy call."""

import math
import statistics
import timeit

import numpy as np

values = np.random.default_rng(seed=0).normal(size=1_000_000)


def python_loop():
    total = 0.0
    for v in values:
        total += v * v
    return total


def vectorised():
    return float((values * values).sum())


# The two sums add in a different order, so compare them with a relative tolerance,
# never with ==.
same = math.isclose(python_loop(), vectorised(), rel_tol=1e-9)
print("same result (relative tolerance 1e-9):", same)

# Each call above doubled as a warm-up. Time several runs and keep the median,
# which a single slow run (another program, a cache miss) cannot drag around.
loop_ms = statistics.median(timeit.repeat(python_loop, number=1, repeat=5)) * 1000
vec_ms = statistics.median(timeit.repeat(vectorised, number=1, repeat=50)) * 1000

print(f"python loop: {loop_ms:.1f} ms (median of 5 runs)")
print(f"vectorised:  {vec_ms:.2f} ms (median of 50 runs)")
print(f"speed-up: {loop_ms / vec_ms:.0f}x")
print("vectorised at least 10x faster here:", loop_ms > 10 * vec_ms)
