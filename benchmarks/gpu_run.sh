#!/usr/bin/env bash
# One call on the GPU machine: register the NVIDIA OpenCL driver, build in
# place, check against NumPy, time every family beside the peers, print a
# short table last.
#   bash benchmarks/gpu_run.sh [tests|bench|peers|all|quick|exp SCRIPT]
#     tests  the whole pytest suite on the GPU (GPURED_DEVICE=nvidia)
#     peers  benchmarks/peers.py: gpured beside torch, CuPy, PyOpenCL
#     bench  peers, then the per-family scripts (device arrays, scans, by-key)
#     quick  peers.py --quick
#     exp S  run python3 S after the set-up (experiments)
#     two    the two-device tests (tests/test_dask*.py -k two_devices) on
#            the host's GPUs alone (kind nvidia-h200-x2; tests runs them
#            too where the host has two GPUs or more): the ICD loader
#            is given NVIDIA's driver only, so devices 0 and 1 are the
#            two GPUs, and GPURED_DEVICE is left unset
#     notebooks  run notebooks/*.ipynb at full size, outputs into $OUT/nb
#            (benchmarks/run_notebooks.py: plain Python, no Jupyter there)
# PyOpenCL, Dask and the suite's optional imports come from wheels carried
# in .whl/ (bash benchmarks/fetch_wheels.sh fetches them here); without
# them the PyOpenCL columns are empty and some tests are not collected.
# Full logs land in $OUT (pytest.txt, peers.txt, bench_*.txt).
set -u
what=${1:-all}
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=${PYTHONPATH:-.}
# The machine sets OCL_ICD_FILENAMES (PoCL and NVIDIA), which its loader
# needs; pytest-xdist's workers saw only libpocl there (every worker ran
# on PoCL), so the suite is spread over plain pytest processes instead.
export PYTHONUNBUFFERED=1
export GPURED_CACHE_DIR=${GPURED_CACHE_DIR:-/tmp/gpured-cache}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -1
  export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error|warning:" || true
python3 - <<'PY'
import gpured
for d in gpured.devices():
    print(d["index"], d["name"], "|", d["platform"], "|", d["type"], "CU", d["compute_units"],
          "fp64", d["fp64"], "sg", d["subgroups"], "wgc", d["wg_collectives"], "ptx", d["nvidia_ptx"])
PY
export GPURED_DEVICE=${GPURED_DEVICE:-nvidia}
if [ "$what" = tests ] || [ "$what" = all ]; then
  # The suite's test ids dealt round robin over ${TESTS_N:-8} plain pytest
  # processes (one file, test_variants.py, alone took > 540 s in one
  # process): kernel builds dominate, one GPU serves all, the program
  # cache on disk is shared (written to a temporary name, renamed).
  n=${TESTS_N:-8}; rm -f "$OUT"/pytest_*.txt /tmp/ids_*
  k="${TESTS_K:-not two_devices and not notebook}"
  python3 -m pytest --collect-only -q -p no:cacheprovider ${TESTS_PATHS:-tests} -k "$k" \
    2>/dev/null | grep "::" > /tmp/ids_all
  echo "$(wc -l < /tmp/ids_all) tests dealt over $n processes"
  python3 - "$n" <<'PY'
import sys
n = int(sys.argv[1]); ids = open("/tmp/ids_all").read().splitlines()
for g in range(n):
    open(f"/tmp/ids_{g}", "w").write("\n".join(ids[g::n]))
PY
  for g in $(seq 0 $((n-1))); do
    [ -s /tmp/ids_$g ] || continue
    # SIGINT first: pytest prints the test it was in and its traceback;
    # a test past TESTS_FT s dumps every thread's stack (faulthandler:
    # also when stuck in C, where SIGINT is not seen)
    timeout -s INT -k 30 ${TESTS_TIMEOUT:-540} python3 -c "import pytest, sys
sys.exit(pytest.main(open('/tmp/ids_$g').read().splitlines()
                     + ['-v', '-p', 'no:cacheprovider', '-rfE',
                        '-o', 'faulthandler_timeout=${TESTS_FT:-240}']))" >> "$OUT/pytest_$g.txt" 2>&1 &
    pids="${pids:-} $!"
  done
  # a process still running TESTS_FT + 20 s in: each of its threads'
  # kernel wait channel, system call and CPU ticks, three times a second
  # apart, into its log (native stalls: a lock's futex, a driver's ioctl,
  # a spin), beside faulthandler's Python stacks (both append: O_APPEND)
  ( sleep $(( ${TESTS_FT:-240} + 20 )); for p in $(pgrep -f "ids_[0-9]"); do
      g=$(tr '\0' ' ' < /proc/$p/cmdline | grep -o "ids_[0-9]*" | head -1 | cut -d_ -f2)
      [ -n "$g" ] || continue
      for k in 1 2 3; do for t in /proc/$p/task/*; do
        echo "THREAD $(basename $t) $(cat $t/comm 2>/dev/null) wchan=$(cat $t/wchan 2>/dev/null) syscall=$(cut -d' ' -f1 $t/syscall 2>/dev/null) utime=$(cut -d' ' -f14 $t/stat 2>/dev/null)"
      done; sleep 1; done >> "$OUT/pytest_$g.txt"
    done ) >/dev/null 2>&1 &
  watcher=$!
  wait $pids
  pkill -P $watcher 2>/dev/null; kill $watcher 2>/dev/null
  cat "$OUT"/pytest_*.txt > "$OUT/pytest.txt"
  grep -hE "^(FAILED|ERROR) " "$OUT"/pytest_*.txt | cut -c1-220
  # (the summary line, wherever the watcher's lines put it)
  for g in "$OUT"/pytest_*.txt; do echo "$(basename $g): $(grep -E '^=+ .* in [0-9.]+s' $g | tail -1)"; done
  for g in "$OUT"/pytest_*.txt; do  # a process without its summary line
    grep -qE "^=+ .* in [0-9.]+s" "$g" || { echo "== $g"; grep -E "^tests/" "$g" | tail -3;
      grep -vE "^tests/.*(PASSED|SKIPPED|XFAIL)|^[.sFEx]+ +\[" "$g" | grep -vE "^\s+File \"/(opt|usr)" | tail -40; }
  done
fi
if [ "$what" = peers ] || [ "$what" = bench ] || [ "$what" = all ] || [ "$what" = quick ]; then
  q=""; [ "$what" = quick ] && q=--quick
  # (on an H200: rows whose ratio fell under 0.88 of benchmarks/peers_h200.json's
  # are printed SLOWER THAN BASELINE)
  timeout -s ABRT ${PEERS_TIMEOUT:-400} python3 -X faulthandler benchmarks/peers.py $q --json "$OUT/peers.json" \
    --baseline benchmarks/peers_h200.json \
    2>&1 | tee "$OUT/peers.txt" | tail -44
fi
if [ "$what" = bench ]; then
  timeout 150 python3 benchmarks/array_bench.py > "$OUT/bench_array.txt" 2>&1
  tail -16 "$OUT/bench_array.txt"
  timeout 150 python3 benchmarks/scan_bench.py --gpu > "$OUT/bench_scan.txt" 2>&1
  tail -20 "$OUT/bench_scan.txt"
  timeout 200 python3 benchmarks/bykey_gpu.py > "$OUT/bench_bykey.txt" 2>&1
  grep TARGET "$OUT/bench_bykey.txt" | cut -c1-160
fi
if [ "$what" = notebooks ]; then
  mkdir -p "$OUT/nb"
  timeout ${NB_TIMEOUT:-500} python3 benchmarks/run_notebooks.py "$OUT/nb" notebooks/*.ipynb 2>&1 | tail -20
  grep -ho "NOTEBOOK OK[^\"]*" "$OUT"/nb/*.ipynb
fi
# (tests on a host with two GPUs or more: the two-device tests there too)
if [ "$what" = tests ] && [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
  what=two
fi
if [ "$what" = two ]; then
  # (the machine's loader takes its drivers from OCL_ICD_FILENAMES: an
  # empty vendors folder and NVIDIA's library alone there)
  echo "OCL_ICD_FILENAMES was ${OCL_ICD_FILENAMES:-unset}"
  mkdir -p /tmp/icd_none
  gpus_only="env -u GPURED_DEVICE OCL_ICD_VENDORS=/tmp/icd_none OCL_ICD_FILENAMES=/usr/local/nvidia/lib64/libnvidia-opencl.so.1"
  $gpus_only python3 -c "import gpured; print([(d['index'], d['name']) for d in gpured.devices()])"
  $gpus_only timeout ${TWO_TIMEOUT:-240} python3 -m pytest -v -rs -p no:cacheprovider \
    tests/test_dask.py tests/test_dask_family.py -k "two_devices and not in_child" \
    > "$OUT/pytest_two.txt" 2>&1
  grep -E "PASSED|FAILED|ERROR|SKIPPED" "$OUT/pytest_two.txt" | cut -c1-160 | tail -20
  tail -3 "$OUT/pytest_two.txt"
fi
if [ "$what" = exp ]; then
  shift
  timeout ${EXP_TIMEOUT:-300} python3 "$@" 2>&1 | tee "$OUT/exp.txt" | tail -60
fi
if [ -f "$OUT/pytest.txt" ]; then
  grep -q "matches no OpenCL device" "$OUT/pytest.txt" && echo "WARNING: some tests did not run on $GPURED_DEVICE"
fi
