# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# ///
"""The same training loop on any CPU: bfloat16 autocast, and no GradScaler needed."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
features = torch.randn(4096, 256)
labels = features[:, :10].argmax(dim=1)  # a learnable rule: the largest of the first 10
loader = DataLoader(TensorDataset(features, labels), batch_size=256, shuffle=True)

model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

first_loss = last_loss = None
for epoch in range(3):
    for xb, yb in loader:
        # bfloat16 has float32's range, so gradients neither overflow nor flush to
        # zero for lack of range: no loss scaling, and the usual backward and step.
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(xb)
            loss = loss_fn(logits, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        first_loss = first_loss if first_loss is not None else loss.item()
        last_loss = loss.item()

print("activations computed in:", logits.dtype)
print("loss computed in:", loss.dtype)
print("master weights kept in:", model[0].weight.dtype)
print("gradients reach the optimizer in:", model[0].weight.grad.dtype)
print(f"loss: {first_loss:.3f} -> {last_loss:.3f}")
print("loss went down:", last_loss < first_loss)
