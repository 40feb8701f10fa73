#!/usr/bin/env bash
# One call on the GPU machine: register the NVIDIA OpenCL driver, build in
# place, check against NumPy, time every family, print a short table last.
#   bash benchmarks/gpu_run.sh [tests|bench|all|quick]
#     tests  the whole pytest suite on the GPU (GPURED_DEVICE=nvidia)
#     bench  reductions (issues 2-3), device arrays and the staged host path
#            (issue 6), scans (issue 4), reduce-by-key (issue 5)
#     quick  the reductions' 1 GiB table only
# Full logs land in $OUT (bench_*.txt, pytest.txt); the table comes last.
set -u
what=${1:-all}
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=${PYTHONPATH:-.}
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
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout ${TESTS_TIMEOUT:-540} python3 -m pytest -q tests -p no:cacheprovider \
    -k "not two_devices" 2>&1 | tail -5 | tee "$OUT/pytest.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ] || [ "$what" = quick ]; then
  timeout 120 python3 -m gpured.bench --ops sum,min,max --dtypes float32,float64,int32 \
    --sizes 1GiB 2>&1 > "$OUT/bench_reduce.txt"; tail -14 "$OUT/bench_reduce.txt"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout 150 python3 benchmarks/array_bench.py > "$OUT/bench_array.txt" 2>&1
  tail -16 "$OUT/bench_array.txt"
  timeout 150 python3 benchmarks/scan_bench.py --gpu > "$OUT/bench_scan.txt" 2>&1
  tail -20 "$OUT/bench_scan.txt"
  timeout 200 python3 benchmarks/bykey_gpu.py > "$OUT/bench_bykey.txt" 2>&1
  grep TARGET "$OUT/bench_bykey.txt" | cut -c1-160
  echo
  echo "=== short table ($(date -u +%F), $(python3 -c 'import gpured; print(gpured.get_device()["name"])')) ==="
  grep -hE "copy bandwidth|^\| (sum|min|max) \| float32" "$OUT/bench_reduce.txt" | head -4
  grep -hE "^e2e|^device-resident|^per call 1 KiB: device array, enq" "$OUT/bench_array.txt"
  grep -hE "copy bandwidth|^cumsum|auto|torch.cumsum|cupy.cumsum" "$OUT/bench_scan.txt" | head -8
  grep -h TARGET "$OUT/bench_bykey.txt" | cut -c8-130 | head -6
  [ -f "$OUT/pytest.txt" ] && tail -1 "$OUT/pytest.txt"
fi
