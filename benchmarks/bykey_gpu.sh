#!/usr/bin/env bash
# Reduce-by-key on the GPU machine in one call: build, the by-key tests
# (every variant, PTX paths included), the issue-5 targets vs torch/CUB.
#   bash benchmarks/bykey_gpu.sh [tests|bench|all]
set -u
what=${1:-all}
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd GPURED_DEVICE=${GPURED_DEVICE:-nvidia} PYTHONPATH=.
export PYTHONUNBUFFERED=1 GPURED_CACHE_DIR=${GPURED_CACHE_DIR:-/tmp/gpured-cache-bykey}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error" || true
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 240 python3 -m pytest -q -x tests/test_bykey.py -p no:cacheprovider 2>&1 | tail -15 | tee "$OUT/bykey_pytest.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout 300 python3 benchmarks/bykey_gpu.py 2>&1 | tee "$OUT/bykey_gpu.txt"
fi
