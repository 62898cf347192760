#!/usr/bin/env bash
# Install PyTorch's CPU-only wheel, at exactly the version constraints.txt pins, before anything
# else installs torch. On PyPI, torch for Linux x86-64 is the CUDA build (several GB of nvidia-*
# wheels); the lesson pins the CPU build. The wheel comes from PyTorch's own CPU index with
# --no-deps, so that index serves torch and nothing else: torch's dependencies still come from
# PyPI, at constraints.txt's versions, when `make` or pip installs the rest. `torch==X` in
# constraints.txt is then already satisfied by the installed `X+cpu`.
#
#   .github/scripts/preinstall-cpu-torch.sh            # into .venv, creating it as `make` would
#   .github/scripts/preinstall-cpu-torch.sh python3    # into that interpreter's environment
set -euo pipefail
cd "$(dirname "$0")/../.."

pin=$(grep -E '^torch==' constraints.txt || true)
if [ -z "$pin" ]; then
  echo "constraints.txt pins no torch==VERSION; nothing to pre-install" >&2
  exit 0
fi

python=${1:-}
if [ -z "$python" ]; then
  python3 -m venv .venv
  python=.venv/bin/python
fi
"$python" -m pip install --quiet --no-deps --index-url https://download.pytorch.org/whl/cpu "$pin"
# (torch cannot be imported yet: its dependencies come with the next install.)
"$python" -m pip show torch | sed -n 's/^Version: /pre-installed torch /p'
