# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.record-runs]
# timeout = 600
# ///
"""Worked example: one small training run, four ways, measured the same way.

Each configuration trains the same model on the same synthetic data in a fresh
process, so that its peak memory is its own: on a GPU, the peak of memory allocated
by PyTorch on the device; on a CPU, the peak resident memory of the whole process,
the Python interpreter and PyTorch's own libraries included.
"""

import concurrent.futures
import multiprocessing
import resource
import statistics
import sys
import time

import torch
from torch import nn

EPOCHS = 6  # the first is a warm-up (and, compiled, includes the compilation)
CLASSES, DIM = 10, 32


def make_data(n, seed):
    """Ten overlapping Gaussian clouds: learnable, but not perfectly."""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(CLASSES, DIM, generator=torch.Generator().manual_seed(0)) * 0.5
    y = torch.randint(0, CLASSES, (n,), generator=g)
    x = centres[y] + torch.randn(n, DIM, generator=g)
    return x, y


def peak_rss_mb():
    """Peak resident memory of this process. On Linux, VmHWM counts from this process's
    own start; ru_maxrss would also carry the peak of the parent it was spawned from."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # reported in kB
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024


def train(config, device):
    torch.manual_seed(0)
    x_train, y_train = (t.to(device) for t in make_data(16384, seed=1))
    x_test, y_test = (t.to(device) for t in make_data(4096, seed=2))
    model = nn.Sequential(
        nn.Linear(DIM, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, CLASSES)
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    dtype = {"bfloat16 autocast": torch.bfloat16, "float16 autocast + GradScaler": torch.float16}.get(config)
    scaler = torch.amp.GradScaler(device, enabled=dtype is torch.float16)
    forward = torch.compile(model) if config == "torch.compile" else model

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    epoch_s = []
    for _ in range(EPOCHS):
        sync()
        start = time.perf_counter()
        for i in torch.randperm(len(x_train), device=device).split(256):
            with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = loss_fn(forward(x_train[i]), y_train[i])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        sync()
        epoch_s.append(time.perf_counter() - start)

    with torch.no_grad(), torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
        accuracy = (forward(x_test).argmax(dim=1) == y_test).float().mean().item() * 100
    if device == "cuda":
        peak_mb, what = torch.cuda.max_memory_allocated() / 2**20, "GPU memory allocated"
    else:
        peak_mb, what = peak_rss_mb(), "process RSS"
    return {
        "first": epoch_s[0], "median": statistics.median(epoch_s[1:]),
        "peak_mb": peak_mb, "what": what, "accuracy": accuracy,
    }


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    configs = ["float32", "bfloat16 autocast", "float16 autocast + GradScaler", "torch.compile"]
    print(f"device: {device}, {EPOCHS} epochs of 16384 samples, held-out set of 4096")
    # One fresh process per configuration: peak memory is a per-process figure.
    context = multiprocessing.get_context("spawn")
    results = {}
    for config in configs:
        if config.startswith("float16") and device != "cuda":
            print(f"{config:<29} | skipped: float16 training with a GradScaler is for CUDA GPUs")
            continue
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            r = results[config] = pool.submit(train, config, device).result()
        print(
            f"{config:<29} | epoch {r['median']:.3f} s (median) | first epoch {r['first']:.3f} s"
            f" | peak {r['peak_mb']:.0f} MB {r['what']} | accuracy {r['accuracy']:.2f}%"
        )

    base = results["float32"]
    for config, r in results.items():
        if config == "float32":
            continue
        ratio = r["median"] / base["median"]
        print(f"{config}: epoch time vs float32: {ratio:.2f}x")
        # Verdicts with a margin: a 2% difference on a small model is noise, not a result.
        print(f"{config}: epoch more than 10% faster than float32 here: {ratio < 0.9}")
        print(f"{config}: epoch more than 10% slower than float32 here: {ratio > 1.1}")
        close = abs(r["accuracy"] - base["accuracy"]) <= 1.0
        print(f"{config}: accuracy within 1 point of float32: {close}")
    if "torch.compile" in results:
        r = results["torch.compile"]
        print(f"torch.compile: compilation took about {r['first'] - r['median']:.1f} s of the first epoch")
