#!/usr/bin/env bash
# One call on the GPU machine for scans: register the NVIDIA OpenCL driver,
# build in place, check every scan variant against NumPy on the H100 and on
# PoCL (sub-groups), then time cumsum against the copy, torch and CuPy.
#   bash benchmarks/scan_gpu.sh [check|bench|tests|all]
set -u
what=${1:-all}
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=. PYTHONUNBUFFERED=1
export GPURED_CACHE_DIR=${GPURED_CACHE_DIR:-/tmp/gpured-cache}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error|warning:" || true
python3 -c "
import gpured
for d in gpured.devices():
    print(d['index'], d['name'], '|', d['platform'], '|', d['type'], 'sg', d['subgroups'],
          'wgc', d['wg_collectives'], 'ptx', d['nvidia_ptx'], 'a64', d['atomics64'])"
if [ "$what" = check ] || [ "$what" = all ]; then
  GPURED_DEVICE=nvidia timeout ${CHECK_TIMEOUT:-140} python3 benchmarks/scan_check.py 2>&1 | tee -a "$OUT/check.txt" | tail -12
  # PoCL's CPU device there has khr sub-groups: the 'subgroup' variant.
  GPURED_DEVICE=Portable SCAN_VARIANTS=subgroup,decoupled_lookback timeout 100 python3 benchmarks/scan_check.py 2>&1 | tee -a "$OUT/check.txt" | tail -6
fi
if [ "$what" = tests ] || [ "$what" = all ]; then
  GPURED_DEVICE=nvidia timeout 240 python3 -m pytest -q -x tests/test_scan.py -p no:cacheprovider 2>&1 | tail -5 | tee "$OUT/pytest.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  GPURED_DEVICE=nvidia timeout 170 python3 benchmarks/scan_bench.py --gpu --sweep 2>&1 | tee "$OUT/bench.txt" | tail -40
fi
