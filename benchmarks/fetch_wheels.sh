#!/usr/bin/env bash
# The wheels benchmarks/gpu_run.sh installs on the GPU machine (no network
# there): fetched here into .whl/ (git-ignored), then carried with each
# device call (carry [".whl"]).  Python 3.12, manylinux x86_64: PyOpenCL
# (the peers' column), Dask and dask.distributed (gpured.dask, the
# two-device tests), and what the suite imports to collect all its tests:
# ml_dtypes (bfloat16), hypothesis (tests/test_properties.py),
# numpy_groupies (aggregate), array-api-compat.  The machine's own
# numpy, pytest, torch and CuPy are kept (their wheels are not fetched).
#   bash benchmarks/fetch_wheels.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
plat=(--only-binary=:all: --python-version 3.12 --implementation cp --abi cp312
      --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64
      --platform manylinux_2_17_x86_64 --platform any)
python3 -m pip download -q -d .whl "${plat[@]}" pyopencl "dask[array]" distributed
python3 -m pip download -q -d .whl "${plat[@]}" --no-deps ml_dtypes hypothesis \
  attrs sortedcontainers numpy_groupies tqdm ndindex array-api-compat
# the machine's own, kept: a second numpy or pytest would shadow them
rm -f .whl/numpy-* .whl/pytest-[0-9]* .whl/pluggy-* .whl/iniconfig-* .whl/pygments-*
ls .whl | wc -l
