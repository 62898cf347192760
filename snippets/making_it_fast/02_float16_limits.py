# /// script
# requires-python = ">=3.11"
# dependencies = ["numpy"]
# ///
"""What 16 bits cannot hold: range and precision limits of float16, next to float32."""

# region import numpy; float32 loses 1e-8 added to 1.0
import numpy as np

# float32 keeps about 7 significant digits: a change of 1e-8 to 1.0 is lost.
one = np.float32(1.0)
print("float32: 1 + 1e-8 == 1:", one + np.float32(1e-8) == one)
# endregion

# float16 keeps about 3 significant digits: near 1000 its steps are 0.5 apart.
print("float16: 1000 + 0.3 =", float(np.float16(1000.0) + np.float16(0.3)))
print("float16: gap between neighbours near 1000 =", float(np.spacing(np.float16(1000.0))))
# numpy prints this maximum as 6.55e+04; as an integer it is exactly 65504.
print("float16 max:", int(np.finfo(np.float16).max))
# Above the maximum: inf. It is the point here, so numpy's warning is off.
with np.errstate(over="ignore"):
    print("float16(70000) =", np.float16(70000.0))

# region inf - inf gives nan; the bytes per value
# Arithmetic on inf can give nan, which spreads to all it touches.
with np.errstate(invalid="ignore"):
    inf = np.float16(np.inf)
    print("float16: inf - inf =", inf - inf)

f32_bytes = np.dtype(np.float32).itemsize
f16_bytes = np.dtype(np.float16).itemsize
print(f"bytes per value: float32 = {f32_bytes}, float16 = {f16_bytes}")
# endregion
