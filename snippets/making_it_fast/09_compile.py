# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# timing = true
# timeout = 600
# ///
# region set-up: imports, the timing rule, a model of small products with long element-wise tails, helpers
"""torch.compile: what the first call costs, and what the calls after it gain."""

import math
import random
import statistics
import time

import torch
from torch import nn

# The timing rule: spread(), verdict(), turns()
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


# The model: small matrix products, long element-wise tails
torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Block(nn.Module):
    """One small matrix product, then a long tail of element-wise work: GELU (tanh form) and an
    RMS norm written out op by op. Eager PyTorch runs each of those ops as its own pass over the
    whole activation; torch.compile can fuse them into a few. Fusion saves passes over memory in
    that tail only: it does not make the matrix product faster, so the larger the share of a
    model's time its matrix products take, the less fusion can save."""

    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        h = self.linear(x)
        h = 0.5 * h * (1 + torch.tanh(0.7978845608 * (h + 0.044715 * h**3)))
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * self.scale
        return x + h


model = nn.Sequential(Block(256), Block(256)).to(device).eval()
batch = torch.randn(4096, 256, device=device)


# Helpers: sync(), call_ms(), recompiles()
def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def call_ms(fn):
    start = time.perf_counter()
    fn(batch)
    sync()  # on a GPU the call only queues the work: wait for it before reading the clock
    return (time.perf_counter() - start) * 1000


def recompiles(fn):
    """Whether a call needs a new compilation: under the "fail_on_recompile" stance, torch.compile
    raises instead of compiling again, so asking costs no compilation."""
    with torch.compiler.set_stance("fail_on_recompile"):
        try:
            fn()
        except RuntimeError as error:
            if "recompile" in str(error):
                return True
            raise
    return False


# endregion

compiled = torch.compile(model)
REPEATS = 30

with torch.inference_mode():
    sync()
    first_s = call_ms(compiled) / 1000  # traces the model, generates code
    # region warm-up, then eager and compiled take turns, 30 calls each; same results?
    model(batch), compiled(batch)  # warm-up for both
    eager_ms, compiled_ms = [], []
    timed = {model: eager_ms, compiled: compiled_ms}
    for order in turns(list(timed), REPEATS):  # taking turns in a changing order
        for fn in order:
            timed[fn].append(call_ms(fn))
    same = torch.allclose(model(batch), compiled(batch), rtol=1e-3, atol=1e-4)
    # endregion
    new_shape = recompiles(lambda: compiled(batch[:1000]))  # it saw 4096 rows
with torch.enable_grad():
    new_grad_mode = recompiles(lambda: compiled(batch))  # it saw gradients off

# region print the timings, the checks, the verdict and the calls that repay the compilation
print("device:", device)
print("threads:", torch.get_num_threads())
print(f"first compiled call: {first_s:.1f} s (tracing and code generation)")
for label, samples in (("eager:   ", eager_ms), ("compiled:", compiled_ms)):
    median, q1, q3 = spread(samples)
    print(f"{label} {median:.2f} ms per call (median of {len(samples)}, IQR {q1:.2f}-{q3:.2f})")
eager_median, compiled_median = spread(eager_ms)[0], spread(compiled_ms)[0]
print(f"compiled time / eager time: {compiled_median / eager_median:.2f}")
print("same results (within float tolerance):", same)
print("another batch size needs a new compilation:", new_shape)
print("switching gradients on needs a new compilation:", new_grad_mode)
print("first call costs more than 100 steady calls:", first_s * 1000 > 100 * compiled_median)
result = verdict(eager_ms, compiled_ms)
print("compiled vs eager here:", result)
if result == "faster":  # only a real speed-up repays compiling
    calls = first_s * 1000 / (eager_median - compiled_median)
    print(f"calls before the compile time is paid back: {calls:.0f}")
# endregion
