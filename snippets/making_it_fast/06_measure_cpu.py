# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# ///
"""Is bfloat16 faster than float32 on this CPU? Measure it; don't assume it."""

import statistics
import timeit
from pathlib import Path

import torch
from torch import nn


def cpu_has(flag):
    """Whether the CPU advertises an instruction set (Linux only; else unknown)."""
    try:
        return flag in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return "unknown"


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).eval()
batch = torch.randn(256, 1024)


def float32_forward():
    return model(batch)


def bfloat16_forward():
    # The timed call must run *inside* autocast, or it measures float32 again.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return model(batch)


def median_ms(fn, repeats=30):
    fn()  # warm-up: the first call picks kernels and allocates buffers
    return statistics.median(timeit.repeat(fn, number=1, repeat=repeats)) * 1000


with torch.inference_mode():
    fp32_ms = median_ms(float32_forward)
    bf16_ms = median_ms(bfloat16_forward)
    out_dtype = bfloat16_forward().dtype



print("CPU capability PyTorch dispatches to:", torch.backends.cpu.get_cpu_capability())
# The two instruction sets that make bfloat16 matrix products fast on Intel CPUs.
print("CPU has AMX bfloat16 tiles:", cpu_has("amx_bf16"))
print("CPU has AVX-512 bfloat16 instructions:", cpu_has("avx512_bf16"))
print("output dtype under autocast:", out_dtype)
print(f"float32:  {fp32_ms:.2f} ms per batch (median of 30)")
print(f"bfloat16: {bf16_ms:.2f} ms per batch (median of 30)")
print(f"bfloat16 time / float32 time: {bf16_ms / fp32_ms:.2f}")
print("bf16 faster than fp32 here:", bf16_ms < fp32_ms)
