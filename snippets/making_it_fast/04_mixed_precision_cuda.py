# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.record-runs]
# requires = ["cuda"]
# ///
"""A complete float16 mixed-precision training loop on a GPU: autocast plus GradScaler."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

if not torch.cuda.is_available():
    raise SystemExit("This example needs an NVIDIA GPU: torch.cuda.is_available() is False.")

torch.manual_seed(0)
features = torch.randn(4096, 256)
labels = features[:, :10].argmax(dim=1)  # a learnable rule: the largest of the first 10
loader = DataLoader(TensorDataset(features, labels), batch_size=256, shuffle=True, pin_memory=True)

model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)).to("cuda")
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")

first_loss = last_loss = None
skipped = 0
for epoch in range(3):
    for xb, yb in loader:
        xb, yb = xb.to("cuda", non_blocking=True), yb.to("cuda", non_blocking=True)
        # The forward pass and the loss run under autocast; each operation picks its
        # own precision (matrix products in float16, reductions such as the loss in float32).
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(xb)
            loss = loss_fn(logits, yb)
        optimizer.zero_grad(set_to_none=True)
        # Scale the loss up so small float16 gradients do not flush to zero ...
        scaler.scale(loss).backward()
        scale_before = scaler.get_scale()
        # ... then unscale, and skip the step if any gradient overflowed to inf or nan.
        scaler.step(optimizer)
        scaler.update()
        skipped += scaler.get_scale() < scale_before
        first_loss = first_loss if first_loss is not None else loss.item()
        last_loss = loss.item()

print("activations computed in:", logits.dtype)
print("loss computed in:", loss.dtype)
print("master weights kept in:", model[0].weight.dtype)
print("gradients reach the optimizer in:", model[0].weight.grad.dtype)
print(f"loss: {first_loss:.3f} -> {last_loss:.3f}")
print("loss went down:", last_loss < first_loss)
print("optimizer steps skipped by GradScaler:", skipped)
print("loss scale now:", scaler.get_scale())
