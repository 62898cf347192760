# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.record-runs]
# requires = ["cuda"]
# ///
"""The same comparison on a GPU, where the clock may only be read after synchronising."""

import statistics
import time

import torch
from torch import nn

if not torch.cuda.is_available():
    raise SystemExit("This example needs an NVIDIA GPU: torch.cuda.is_available() is False.")

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096)).cuda().eval()
batch = torch.randn(2048, 4096, device="cuda")


def float32_forward():
    return model(batch)


def bfloat16_forward():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(batch)


def median_ms(fn, repeats=30):
    for _ in range(3):  # warm-up: kernel selection, memory pool growth
        fn()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()  # start from an idle GPU
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()  # wait for the work, not just its launch
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


with torch.inference_mode():
    fp32_ms = median_ms(float32_forward)
    bf16_ms = median_ms(bfloat16_forward)
    out_dtype = bfloat16_forward().dtype

print("GPU:", torch.cuda.get_device_name())
# "highest" means float32 products really run in float32, not in TF32 tensor-core mode.
print("float32 matmul precision:", torch.get_float32_matmul_precision())
print("output dtype under autocast:", out_dtype)
print(f"float32:  {fp32_ms:.2f} ms per batch (median of 30)")
print(f"bfloat16: {bf16_ms:.2f} ms per batch (median of 30)")
print(f"bfloat16 time / float32 time: {bf16_ms / fp32_ms:.2f}")
print("bf16 faster than fp32 here:", bf16_ms < fp32_ms)
