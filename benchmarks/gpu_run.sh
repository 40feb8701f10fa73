#!/usr/bin/env bash
# One call on the GPU machine: register the NVIDIA OpenCL driver, build in
# place, check against NumPy, time everything, print a short table last.
#   bash benchmarks/gpu_run.sh [quick|tests|bench|all]
set -u
what=${1:-all}
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
export PYTHONUNBUFFERED=1
export GPURED_CACHE_DIR=${GPURED_CACHE_DIR:-/tmp/gpured-cache}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error|warning:" || true
python3 - <<'PY'
import gpured
for d in gpured.devices():
    print(d["index"], d["name"], "|", d["platform"], "|", d["type"], "CU", d["compute_units"],
          "fp64", d["fp64"], "sg", d["subgroups"], "wgc", d["wg_collectives"], "ptx", d["nvidia_ptx"])
PY
export GPURED_DEVICE=${GPURED_DEVICE:-nvidia}
# Build time: first build in a fresh cache, then a second process served from disk.
rm -rf /tmp/gpured-buildtime
for i in 1 2; do
  GPURED_CACHE_DIR=/tmp/gpured-buildtime python3 -c "
import time, numpy as np, gpured
a = np.ones(1 << 20, np.float32)
t = time.perf_counter(); gpured.sum(a); t1 = time.perf_counter() - t
t = time.perf_counter(); gpured.sum(a); t2 = time.perf_counter() - t
print('process $i: first sum %.1f ms, second %.3f ms, cache %s' % (t1*1e3, t2*1e3, gpured._core.stats()))"
done
if [ "$what" = tests ] || [ "$what" = all ]; then
  python3 -m pytest -q -x tests -p no:cacheprovider 2>&1 | tail -5 | tee "$OUT/pytest.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ] || [ "$what" = quick ]; then
  python3 -m gpured.bench --ops sum,min,max --dtypes float32,float64,int32 --sizes 1GiB 2>&1 | tee "$OUT/bench.txt" | tail -14
fi
