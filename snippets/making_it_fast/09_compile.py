# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.record-runs]
# timeout = 600
# ///
"""torch.compile: what the first call costs, and what the calls after it gain."""

import statistics
import time
import timeit

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
# Many small element-wise steps between the matrix products: the kind of work that
# fusing operations into fewer kernels speeds up.
model = nn.Sequential(
    nn.Linear(512, 2048), nn.LayerNorm(2048), nn.GELU(),
    nn.Linear(2048, 2048), nn.LayerNorm(2048), nn.GELU(),
    nn.Linear(2048, 512),
).to(device).eval()
batch = torch.randn(512, 512, device=device)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()


def median_ms(fn, repeats=30):
    fn()  # warm-up
    sync()

    def call():
        fn()
        sync()

    return statistics.median(timeit.repeat(call, number=1, repeat=repeats)) * 1000


compiled = torch.compile(model)

with torch.inference_mode():
    start = time.perf_counter()
    compiled(batch)  # the first call traces the model and generates code
    sync()
    first_s = time.perf_counter() - start
    eager_ms = median_ms(lambda: model(batch))
    compiled_ms = median_ms(lambda: compiled(batch))
    same = torch.allclose(model(batch), compiled(batch), rtol=1e-3, atol=1e-4)

print("device:", device)
print(f"first compiled call: {first_s:.1f} s (tracing and code generation)")
print(f"eager:    {eager_ms:.2f} ms per call (median of 30)")
print(f"compiled: {compiled_ms:.2f} ms per call (median of 30)")
print("same results (within float tolerance):", same)
print("first call costs more than 100 steady calls:", first_s * 1000 > 100 * compiled_ms)
print("compiled faster than eager here:", compiled_ms < eager_ms)
saved_ms = eager_ms - compiled_ms
if saved_ms > 0:
    print(f"calls before the compile time is paid back: {first_s * 1000 / saved_ms:.0f}")
else:
    print("calls before the compile time is paid back: never, at this size on this device")
