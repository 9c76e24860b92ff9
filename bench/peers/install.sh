#!/usr/bin/env bash
# Installs the peers of the benchmark (PyTensor, numba, JAX, PyTorch) into a virtualenv at
# bench/peers/.venv, at pinned versions, from PyPI. Idempotent: a second run only checks.
#
#     bench/peers/install.sh            # then: bench/peers/run_all.py
#
# - CPython 3.11 (python3.11, else python3). The pins are the newest releases that PyPI
#   serves for it (pytensor 3.0.7 caps numba at 0.65.1).
# - PyTorch from PyPI is its CUDA build (about 4 GB of nvidia-* wheels); PyPI has no
#   CPU-only torch wheel for Linux x86_64, and without those wheels `import torch` fails
#   (libtorch_global_deps needs libcudart). It runs on the CPU all the same.
# - PyTensor's C backend needs a BLAS to link its C ops against (pip's PyTensor finds
#   none and falls back to slow paths): OpenBLAS from Debian (libopenblas-dev), installed
#   with apt-get if it is missing; peers.py sets PYTENSOR_FLAGS=blas__ldflags=-lopenblas.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="$(command -v python3.11 || command -v python3)"

pins=(
  "numpy==2.4.6"
  "pytensor==3.0.7"
  "numba==0.65.1"
  "jax[cpu]==0.10.2"
  "jaxlib==0.10.2"
  "torch==2.15.0"
)

if ! ldconfig -p | grep 'libopenblas\.so ' >/dev/null; then
  echo "installing OpenBLAS (libopenblas-dev) for PyTensor's C backend"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-dev
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-dev
  fi
fi

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi

# Only call pip when a pin is not satisfied (pip itself would also be a no-op, but slower).
if ! "$venv/bin/python" - "${pins[@]}" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    name = name.split("[")[0]
    try:
        if version(name) != want:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
  "$venv/bin/pip" install --quiet "${pins[@]}"
fi

"$venv/bin/python" - <<'PY'
import jax, numba, numpy, pytensor, torch
print("peers installed:", ", ".join(f"{m.__name__} {m.__version__}"
      for m in (numpy, pytensor, numba, jax, torch)))
PY
