# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# ///
"""The same training loop on any CPU: bfloat16 autocast, and no GradScaler needed."""

import statistics
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
features = torch.randn(4096, 256)
labels = features[:, :10].argmax(dim=1)  # a learnable rule: the largest of the first 10


def train(use_bfloat16, epochs=6):
    """Train a fresh model; return it, the last logits and loss, every loss, and the
    median epoch time after the first (warm-up) epoch."""
    torch.manual_seed(0)  # the same weights and batch order for both runs
    loader = DataLoader(TensorDataset(features, labels), batch_size=256, shuffle=True)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 10))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, seconds = [], []
    for _ in range(epochs):
        start = time.perf_counter()
        for xb, yb in loader:
            # bfloat16 has float32's range, so gradients neither overflow nor flush to
            # zero for lack of range: no loss scaling, and the usual backward and step.
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bfloat16):
                logits = model(xb)
                loss = loss_fn(logits, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        seconds.append(time.perf_counter() - start)
    return model, logits, loss, losses, statistics.median(seconds[1:])


model, logits, loss, losses, bf16_s = train(use_bfloat16=True)
*_, fp32_s = train(use_bfloat16=False)

print("activations computed in:", logits.dtype)
print("loss computed in:", loss.dtype)
print("master weights kept in:", model[0].weight.dtype)
print("gradients reach the optimizer in:", model[0].weight.grad.dtype)
print(f"loss: {losses[0]:.3f} -> {losses[-1]:.3f}")
print("loss went down:", losses[-1] < losses[0])
print(f"epoch in float32: {fp32_s * 1000:.1f} ms, under bfloat16 autocast: {bf16_s * 1000:.1f} ms (median)")
print("bf16 training faster than fp32 here:", bf16_s < fp32_s)
