# /// script
# requires-python = ">=3.11"
# ///
# region imports, MIN_EFFECT = 0.10, spread(): the median and IQR of the timings
"""The lesson's one rule for timing verdicts, applied to made-up timings in milliseconds."""

import math
import statistics

MIN_EFFECT = 0.10  # below 10% is never called, however tight the spread


def spread(samples_ms):
    """Median and interquartile range (Q1, Q3) of repeated timings."""
    q1, median, q3 = statistics.quantiles(samples_ms, n=4, method="inclusive")
    return median, q1, q3


# endregion
def verdict(baseline_ms, candidate_ms):
    # region at least 5 positive timings a side; their medians and IQRs
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
    # endregion
    ratio = c_med / b_med
    if c_q3 < b_q1 and ratio <= 1 - MIN_EFFECT:
        return "faster"
    if c_q1 > b_q3 and ratio >= 1 + MIN_EFFECT:
        return "slower"
    return "within noise"


# region four made-up cases, in milliseconds
base = [10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 10.1]
print("20% lower, tight spread ->", verdict(base, [8.0, 8.1, 7.9, 8.2, 7.8, 8.0, 8.1]))
print("20% lower, wide spread ->", verdict(base, [6.0, 11.0, 7.0, 10.5, 8.0, 10.8, 6.5]))
print("5% lower, tight spread ->", verdict(base, [9.5, 9.6, 9.4, 9.5, 9.6, 9.4, 9.5]))
print("20% higher, tight spread ->", verdict(base, [12.0, 12.1, 11.9, 12.2, 11.8, 12.0, 12.1]))
