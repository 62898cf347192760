# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# timing = true
# timeout = 600
# ///
# region docstring, imports
"""Worked example: one small training run, four ways, measured the same way.

Each configuration trains the same model on the same synthetic data in a fresh
process, so that its peak memory is its own: on a GPU, the peak of memory allocated
by PyTorch on the device; on a CPU, the peak resident memory of the whole process,
the Python interpreter and PyTorch's own libraries included.
"""

import concurrent.futures
import math
import multiprocessing
import resource
import statistics
import sys
import time

import torch
from torch import nn

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

# region sizes, make_data(), peak_rss_mb()
EPOCHS = 6  # the first is a warm-up (and, compiled, includes the compilation); 5 timed epochs remain
CLASSES, DIM = 10, 32
TRAIN, TEST = 4096, 4096  # small enough that float16 on a CPU without float16 arithmetic stays bearable


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
# endregion


def train(config, device):
    # region data, model, optimizer
    torch.manual_seed(0)
    x_train, y_train = (t.to(device) for t in make_data(TRAIN, seed=1))
    x_test, y_test = (t.to(device) for t in make_data(TEST, seed=2))
    model = nn.Sequential(
        nn.Linear(DIM, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, CLASSES)
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    # endregion

    dtype = {"bfloat16 autocast": torch.bfloat16, "float16 autocast + GradScaler": torch.float16}.get(config)
    scaler = torch.amp.GradScaler(device, enabled=dtype is torch.float16)
    forward = torch.compile(model) if config == "torch.compile" else model

    # region sync(), peak memory reset
    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    # endregion

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

    # region accuracy, peak memory, results
    with torch.no_grad(), torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
        accuracy = (forward(x_test).argmax(dim=1) == y_test).float().mean().item() * 100
    if device == "cuda":
        peak_mb, what = torch.cuda.max_memory_allocated() / 2**20, "GPU memory allocated"
    else:
        peak_mb, what = peak_rss_mb(), "process RSS"
    return {
        "first": epoch_s[0], "epochs": epoch_s[1:], "threads": torch.get_num_threads(),
        "peak_mb": peak_mb, "what": what, "accuracy": accuracy,
    }
    # endregion


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    configs = ["float32", "bfloat16 autocast", "float16 autocast + GradScaler", "torch.compile"]
    # region print the device and oneDNN's 16-bit paths; a spawn context
    print(f"device: {device}, {EPOCHS} epochs of {TRAIN} samples, held-out set of {TEST}")
    if device == "cpu":
        # oneDNN runs 16-bit matrix products fast on CPUs with the instructions for them; where it
        # has no path for a format, PyTorch (as of torch 2.13) computes that format's products in a
        # slow generic kernel.
        onednn = torch.backends.mkldnn.is_available()
        print("oneDNN bfloat16 path available:", onednn and torch.ops.mkldnn._is_mkldnn_bf16_supported())
        print("oneDNN float16 path available:", onednn and torch.ops.mkldnn._is_mkldnn_fp16_supported())
    context = multiprocessing.get_context("spawn")
    results = {}
    # endregion
    for config in configs:  # a fresh process each: its own peak memory
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            r = results[config] = pool.submit(train, config, device).result()
        # region print the rows, each against float32, the compile time
        if config == "float32":
            print("threads:", r["threads"])
        median, q1, q3 = spread(r["epochs"])
        print(
            f"{config:<29} | epoch {median:.3f} s (median of {len(r['epochs'])}, IQR {q1:.3f}-{q3:.3f})"
            f" | first epoch {r['first']:.3f} s | peak {r['peak_mb']:.0f} MB {r['what']}"
            f" | accuracy {r['accuracy']:.2f}%"
        )

    base = results["float32"]
    for config, r in results.items():
        if config == "float32":
            continue
        ratio = spread(r["epochs"])[0] / spread(base["epochs"])[0]
        print(f"{config}: epoch time / float32 epoch time: {ratio:.2f}")
        # Seconds to ms for the verdict, which takes timings in ms; the rule is the same.
        print(f"{config} vs float32 here:", verdict([t * 1000 for t in base["epochs"]],
                                                    [t * 1000 for t in r["epochs"]]))
        close = abs(r["accuracy"] - base["accuracy"]) <= 1.0
        print(f"{config}: accuracy within 1 point of float32: {close}")
    r = results["torch.compile"]
    compile_s = r["first"] - spread(r["epochs"])[0]
    print(f"torch.compile: compilation took about {compile_s:.1f} s of the first epoch")
    # endregion
