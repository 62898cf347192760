# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# [tool.recorded]
# requires = ["cuda"]
# timing = true
# ///
# region imports, GPU check; two 8192 x 8192 matrices, warmed up
"""How a GPU timing lies: reading the clock before the GPU has finished."""

import time

import torch

if not torch.cuda.is_available():
    raise SystemExit("This example needs an NVIDIA GPU: torch.cuda.is_available() is False.")

a = torch.randn(8192, 8192, device="cuda")
b = torch.randn(8192, 8192, device="cuda")
for _ in range(3):  # warm-up
    a @ b
torch.cuda.synchronize()
# endregion


def timed(sync: bool, repeats: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b  # returns as soon as the work is queued on the GPU
    if sync:
        torch.cuda.synchronize()  # wait until the queued work is done
    elapsed = (time.perf_counter() - start) / repeats * 1000
    # region leave the GPU idle; time it both ways, print both and how far apart they are
    torch.cuda.synchronize()  # leave an idle GPU for the next measurement
    return elapsed


wrong = timed(sync=False)
right = timed(sync=True)
print(f"without synchronize: {wrong:.3f} ms per matmul (the time to queue it)")
print(f"with synchronize:    {right:.3f} ms per matmul (the time to compute it)")
print(f"the unsynchronised figure is {right / wrong:.0f}x too small")
print("unsynchronised timing far below the real one:", wrong * 5 < right)
# endregion
