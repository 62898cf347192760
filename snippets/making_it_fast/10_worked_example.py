# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# timing = true
# timeout = 600
# ///
# region set-up: imports, the timing rule, sizes, make_data(), peak_rss_mb()
"""Worked example: one small training run, four ways, measured the same way.

Each configuration trains the same model on the same synthetic data in a process of its
own, so that its peak memory is its own: on a GPU, the peak of memory allocated by
PyTorch on the device; on a CPU, the peak resident memory of the whole process, the
Python interpreter and PyTorch's own libraries included. Either peak also covers the data
and the final evaluation pass over the whole held-out set, so it is not the memory of
training alone. The four take turns, one epoch at a time in a changing order, so that no
configuration always runs after another.
"""

import math
import multiprocessing
import random
import resource
import statistics
import sys
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


# Sizes, make_data(), peak_rss_mb()
# The first epoch is a warm-up (and, compiled, includes the compilation); the 8 timed ones are two
# full cycles of the four configurations' orders.
EPOCHS = 9
CLASSES, DIM, WIDTH = 10, 32, 256
TRAIN, TEST = 2048, 2048  # small enough that float16 on a CPU without float16 arithmetic stays bearable


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
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # reported in kB
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux, bytes on macOS
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024


# endregion


def train(config, device, conn):
    # region docstring; data, model, Adam, loss
    """One configuration in its own process: an epoch each time it is asked, then its
    accuracy and peak memory."""
    torch.manual_seed(0)
    x_train, y_train = (t.to(device) for t in make_data(TRAIN, seed=1))
    x_test, y_test = (t.to(device) for t in make_data(TEST, seed=2))
    model = nn.Sequential(
        nn.Linear(DIM, WIDTH), nn.ReLU(), nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Linear(WIDTH, CLASSES)
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    # endregion

    dtype = {"bfloat16 autocast": torch.bfloat16, "float16 autocast + GradScaler": torch.float16}.get(config)
    scaler = torch.amp.GradScaler(device, enabled=dtype is torch.float16)
    forward = torch.compile(model) if config == "torch.compile" else model

    # region an epoch each time it is asked: autocast around the forward pass and the loss, the scaler around backward and step; timed
    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()

    order = torch.Generator(device=device).manual_seed(3)  # the same batches in every process
    while conn.recv() == "epoch":
        sync()
        start = time.perf_counter()
        for i in torch.randperm(len(x_train), device=device, generator=order).split(256):
            with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = loss_fn(forward(x_train[i]), y_train[i])
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        sync()
        conn.send(time.perf_counter() - start)
    # endregion

    # region accuracy on the held-out set, peak memory, results
    with torch.no_grad(), torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
        accuracy = (forward(x_test).argmax(dim=1) == y_test).float().mean().item() * 100
    if device == "cuda":
        peak_mb, what = torch.cuda.max_memory_allocated() / 2**20, "GPU memory allocated"
    else:
        peak_mb, what = peak_rss_mb(), "process RSS"
    conn.send({"threads": torch.get_num_threads(), "peak_mb": peak_mb, "what": what, "accuracy": accuracy})
    # endregion


# region main: a process per configuration; they take turns, an epoch each; each printed against float32
if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    configs = ["float32", "bfloat16 autocast", "float16 autocast + GradScaler", "torch.compile"]
    # Print the device and oneDNN's 16-bit paths; start one process per configuration.
    print(f"device: {device}, {EPOCHS} epochs of {TRAIN} samples, held-out set of {TEST}")
    if device == "cpu":
        # oneDNN runs 16-bit matrix products fast on CPUs with the instructions for them: these
        # two lines say whether it has a path for each format on this CPU.
        onednn = torch.backends.mkldnn.is_available()
        print("oneDNN bfloat16 path available:", onednn and torch.ops.mkldnn._is_mkldnn_bf16_supported())
        print("oneDNN float16 path available:", onednn and torch.ops.mkldnn._is_mkldnn_fp16_supported())
    # Each process starts from a server that imported torch once: quick, and safe with CUDA.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch"])
    workers = {}
    for config in configs:  # a process each: its own peak memory
        ours, theirs = context.Pipe()
        context.Process(target=train, args=(config, device, theirs), daemon=True).start()
        workers[config] = ours
    epochs = {config: [] for config in configs}
    for order in turns(configs, EPOCHS):  # one epoch each, taking turns in a changing order
        for config in order:
            workers[config].send("epoch")
            epochs[config].append(workers[config].recv())
    results = {}
    for config, conn in workers.items():
        conn.send("done")
        results[config] = conn.recv() | {"first": epochs[config][0], "epochs": epochs[config][1:]}
    # Print the rows, each against float32, and the compile time.
    print("threads:", results["float32"]["threads"])
    for config, r in results.items():
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
        baseline_ms, candidate_ms = ([t * 1000 for t in x["epochs"]] for x in (base, r))
        print(f"{config} vs float32 here:", verdict(baseline_ms, candidate_ms))
        close = abs(r["accuracy"] - base["accuracy"]) <= 1.0
        print(f"{config}: accuracy within 1 point of float32: {close}")
    r = results["torch.compile"]
    compile_s = r["first"] - spread(r["epochs"])[0]
    print(f"torch.compile: compilation took about {compile_s:.1f} s of the first epoch")
# endregion
