# /// script
# requires-python = ">=3.11"
# dependencies = ["torch"]
# ///
"""float16 and bfloat16 side by side: where their 16 bits go, and what that costs."""

# region imports
import math

import torch

# endregion

# region each format's bits, max, smallest normal and eps, from torch.finfo
# eps = 2**-mantissa_bits; the exponent has what the sign bit leaves.
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    info = torch.finfo(dtype)
    mantissa = round(-math.log2(info.eps))
    exponent = info.bits - 1 - mantissa
    print(
        f"{str(dtype).removeprefix('torch.'):>8}: {info.bits} bits = 1 sign + {exponent} exponent"
        f" + {mantissa} mantissa | max {info.max:.6g} | smallest normal"
        f" {info.smallest_normal:.6g} | eps {info.eps:.6g}"
    )
# endregion

# region 1e-6 and 1e-8 stored in each 16-bit format
# Below the smallest normal: subnormals, ever fewer significant bits, then 0.
for dtype in (torch.float16, torch.bfloat16):
    name = str(dtype).removeprefix("torch.")
    for value in (1e-6, 1e-8):
        print(f"{name}: {value:g} is stored as {torch.tensor(value, dtype=dtype).item():.6g}")
# endregion

# A typical update is tiny next to its weight: in 16 bits it can vanish.
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    weight = torch.tensor(1.0, dtype=dtype)
    updated = weight + torch.tensor(1e-4, dtype=dtype)
    lost = bool(updated == weight)
    # region print the sum, and whether the update was lost
    name = str(dtype).removeprefix("torch.")
    print(f"{name}: 1.0 + 0.0001 = {updated.item():.6g} (update lost: {lost})")
    # endregion

# region the weights of a 7-billion-parameter model in each format
# The weights of a 7-billion-parameter model, and nothing else.
params = 7_000_000_000
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    size = torch.empty((), dtype=dtype).element_size()
    name = str(dtype).removeprefix("torch.")
    print(f"7B parameters in {name}: {params * size / 1e9:.0f} GB")
# endregion
