"""A made-up machine for the recorder's tests: describing the real one imports torch."""

import platform

FAKE_MACHINE = {
    "os": "Linux-test",
    "cpu": {"model": "Test CPU", "arch": "x86_64", "cores": 2, "features": ["avx2"]},
    "gpu": None,
    "python": platform.python_version(),
    "torch": "0.0-test",
    "numpy": "0.0-test",
    "git": {"commit": None, "dirty": None},
    "compile_cache": "cold",
}
FAKE_GPU = {
    "name": "Test GPU",
    "capability": "9.0",
    "memory_gib": 80.0,
    "cuda": "12.8",
    "count": 1,
    "driver": "570.00",
}


def fake_cpu(flags, model: str = "Test CPU", looked=("avx2", "avx512f", "avx512_bf16", "amx_bf16")) -> dict:
    """A CPU block as provenance.cpu writes it, for a machine with these flags."""
    looked = list(dict.fromkeys([*looked, *flags]))
    return {
        "model": model,
        "arch": "x86_64",
        "cores": 2,
        "features": [f for f in looked if f in flags],
        "looked_for": looked,
    }
