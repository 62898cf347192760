# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# timing = true
# ///
"""The same training loop on any CPU: bfloat16 autocast, and no GradScaler needed."""

# region imports, the timing rule, the synthetic data
import math
import random
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

# The timing rule: spread(), verdict(), turns().
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


# Synthetic data.
torch.manual_seed(0)
features = torch.randn(2048, 256)
labels = features[:, :10].argmax(dim=1)  # a learnable rule: the largest of the first 10
BATCH, EPOCHS = 256, 6  # the first epoch is a warm-up and is not timed
# Batches are index slices of these tensors: no DataLoader, whose per-sample indexing and
# collation in Python would be timed along with the training step.
# endregion


class Run:
    # region __init__: model, optimizer
    """One model and its optimizer, trained in plain float32 or under bfloat16 autocast."""

    def __init__(self, use_bfloat16):
        torch.manual_seed(0)  # the same initial weights for both runs
        self.use_bfloat16 = use_bfloat16
        self.model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 10))
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.order = torch.Generator().manual_seed(1)  # the same batch order for both runs
        self.losses, self.step_ms = [], []

    # endregion
    def epoch(self, timed):
        for i in torch.randperm(len(features), generator=self.order).split(BATCH):
            # region start the clock; take the batch
            start = time.perf_counter()
            xb, yb = features[i], labels[i]
            # endregion
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.use_bfloat16):  # no GradScaler
                self.logits = self.model(xb)
                self.loss = F.cross_entropy(self.logits, yb)
            # region backward and step as in float32; keep the step's time and the loss
            self.optimizer.zero_grad(set_to_none=True)
            self.loss.backward()
            self.optimizer.step()
            if timed:
                self.step_ms.append((time.perf_counter() - start) * 1000)
            self.losses.append(self.loss.item())
            # endregion


# region train both, taking turns epoch by epoch; print the dtypes, the loss, the timings, the verdict
bf16, fp32 = Run(use_bfloat16=True), Run(use_bfloat16=False)
for epoch, order in enumerate(turns([bf16, fp32], EPOCHS)):  # epoch 0 warms up
    for run in order:  # the runs take turns, in a changing order
        run.epoch(timed=epoch > 0)

print("threads:", torch.get_num_threads())
print("activations computed in:", bf16.logits.dtype)
print("loss computed in:", bf16.loss.dtype)
print("weights kept in:", bf16.model[0].weight.dtype)  # the model's own parameters
print("gradients reach the optimizer in:", bf16.model[0].weight.grad.dtype)
print(f"loss: {bf16.losses[0]:.3f} -> {bf16.losses[-1]:.3f}")
print("loss went down:", bf16.losses[-1] < bf16.losses[0])

# Which precision do the ops between the matrix products get? On the CPU, softmax, layer_norm
# and sums are on neither of autocast's lists, so they run in the dtype they are given: bfloat16
# when it comes from a linear layer. Only the CPU's "autocast to float32" list (losses such as
# cross_entropy among them) is computed in float32. CUDA's lists differ.
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    hidden = bf16.model[0](features[:BATCH])
    for name, out in (
        ("softmax", F.softmax(hidden, dim=1)),
        ("log_softmax", F.log_softmax(hidden, dim=1)),
        ("layer_norm", F.layer_norm(hidden, hidden.shape[1:])),
        ("sum", hidden.sum()),
        ("cross_entropy", F.cross_entropy(bf16.model(features[:BATCH]), labels[:BATCH])),
    ):
        print(f"under CPU autocast, {name} of bfloat16 activations returns: {out.dtype}")

for label, run in (("float32: ", fp32), ("bfloat16:", bf16)):
    median, q1, q3 = spread(run.step_ms)
    print(f"{label} {median:.2f} ms per step (median of {len(run.step_ms)}, IQR {q1:.2f}-{q3:.2f})")
print(f"bfloat16 time / float32 time: {spread(bf16.step_ms)[0] / spread(fp32.step_ms)[0]:.2f}")
print("bf16 vs fp32 training here:", verdict(fp32.step_ms, bf16.step_ms))
# endregion
