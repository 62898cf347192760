# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# requires = ["cuda"]
# ///
# region imports, data, model; a fused SGD optimizer; the GradScaler
"""A complete float16 mixed-precision training loop on a GPU: autocast plus GradScaler."""

import math

import torch
import torch.nn.functional as F
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

# fused=True: the scaler hands its scale and inf/nan flag to the optimizer, whose fused kernel
# unscales the gradients and skips the step on inf/nan on the GPU, with no CPU wait.
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, fused=True)
INIT_SCALE = 2.0**16  # the default, written out: the skip count uses it
scaler = torch.amp.GradScaler("cuda", init_scale=INIT_SCALE)

epoch_losses = []
steps = 0
# endregion
for epoch in range(3):
    loss_sum = torch.zeros((), device="cuda")  # summed on the GPU, read once an epoch
    for xb, yb in loader:
        xb, yb = xb.to("cuda", non_blocking=True), yb.to("cuda", non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(xb)
            loss = loss_fn(logits, yb)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()  # scaled up, so small grads survive
        scaler.step(optimizer)  # unscales and steps, or skips the step on inf/nan
        scaler.update()  # adjusts the scale for the next step
        # region add the loss to the sum (no sync); count the step
        loss_sum += loss.detach()  # stays on the GPU: no sync
        steps += 1
        # endregion
    epoch_losses.append(loss_sum.item() / len(loader))  # one sync per epoch

# region print the dtypes, the loss, the skipped steps and the scale; other ops under autocast
# Read the scale once, after the loop. With fewer steps than the growth interval (2000 by
# default) it never grows; it halves once for each skipped step.
assert steps < scaler.get_growth_interval()
skipped = round(math.log2(INIT_SCALE / scaler.get_scale()))

print("activations computed in:", logits.dtype)
print("loss computed in:", loss.dtype)
print("weights kept in:", model[0].weight.dtype)  # the model's own parameters
print("gradients reach the optimizer in:", model[0].weight.grad.dtype)
print(f"loss (mean over the first and the last epoch): {epoch_losses[0]:.3f} -> {epoch_losses[-1]:.3f}")
print("loss went down:", epoch_losses[-1] < epoch_losses[0])
print("optimizer steps skipped by GradScaler:", skipped)
print("loss scale now:", scaler.get_scale())

# CUDA's "autocast to float32" list holds softmax, log_softmax, layer_norm and sum: each
# returns float32 even from float16 activations. (On the CPU the same ops follow their input.)
with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
    hidden = model[0](features[:256].to("cuda"))
    for name, out in (
        ("softmax", F.softmax(hidden, dim=1)),
        ("log_softmax", F.log_softmax(hidden, dim=1)),
        ("layer_norm", F.layer_norm(hidden, hidden.shape[1:])),
        ("sum", hidden.sum()),
        ("cross_entropy", F.cross_entropy(model(features[:256].to("cuda")), labels[:256].to("cuda"))),
    ):
        print(f"under CUDA autocast, {name} of float16 activations returns: {out.dtype}")
# endregion
