# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# timing = true
# ///
"""Measure first: where does the time of one small training step go? torch.profiler answers per op."""

# region set-up: imports; a model like the worked example's, 512 wide; Adam; step(); 5 warm-up steps
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

# A three-layer model like the worked example's (its earlier, 512-wide version), one batch
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(256, 32), torch.randint(0, 10, (256,))


def step():
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


for _ in range(5):
    step()  # warm-up: first steps allocate Adam's state, pick kernels

STEPS = 20
# endregion
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(STEPS):
        step()

# Self time: in the op itself, not in ops it calls; shares sum to <= 100%.
ops = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
# region print the top 5 ops' shares, and the matrix products' share
total = sum(e.self_cpu_time_total for e in ops)
print("threads:", torch.get_num_threads())
print(f"top 5 ops by self CPU time over {STEPS} training steps:")
for e in ops[:5]:
    print(f"  {e.key}: {100 * e.self_cpu_time_total / total:.0f}%")
matmul = sum(e.self_cpu_time_total for e in ops if e.key in ("aten::mm", "aten::addmm"))
print(f"matrix products (aten::mm, aten::addmm): {100 * matmul / total:.0f}% of self CPU time")
print("the matrix products take the largest share:", ops[0].key in ("aten::mm", "aten::addmm"))
# endregion
