#!/usr/bin/env bash
# A/B (or bisect) of earlier commits against the work tree on the GPU
# machine, one call: each commit's sources built in a folder of its own,
# all builds at once, then SCRIPT run in each (and in the work tree),
# each with a program cache of its own.  Found the float32 cumsum
# regression of 65a48a8 (0.70 -> 0.84 ms on the H200, session 23).
#
# Here, once per set of commits (the folders are git-ignored, carried):
#   bash benchmarks/exp/ab_h200.sh prepare C1 C2 ...
# Then, carrying .ab and .whl:
#   run(command="bash benchmarks/exp/ab_h200.sh run benchmarks/exp/scan_peers.py f32",
#       carry=[".whl", ".ab"])
# The script is taken from the work tree (copied into each folder), so
# every commit is timed by the same code; R=2 runs the set twice.
set -u
cmd=${1:-}; shift || true
if [ "$cmd" = prepare ]; then
  grep -qx "/.ab/" .git/info/exclude || echo "/.ab/" >> .git/info/exclude
  rm -rf .ab; mkdir -p .ab
  for c in "$@"; do
    mkdir -p .ab/$c
    git archive "$c" csrc kernels gpured setup.py pyproject.toml _build_backend \
      | tar -x -C .ab/$c
    mkdir -p .ab/$c/benchmarks/exp
  done
  du -sh .ab
  exit 0
fi
[ "$cmd" = run ] || { echo "usage: $0 prepare C... | run SCRIPT [ARGS]"; exit 2; }
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/site .whl/*.whl >/dev/null 2>&1
  export PYTHONPATH=/tmp/site
fi
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd GPURED_DEVICE=${GPURED_DEVICE:-nvidia} PYTHONUNBUFFERED=1
script=$1; shift
commits=$(ls .ab)
for c in $commits; do
  cp benchmarks/exp/*.py .ab/$c/benchmarks/exp/
  (cd .ab/$c && python3 setup.py -q build_ext --inplace >/tmp/ab_$c.log 2>&1
   echo "built $c rc=$?") &
done
(python3 setup.py -q build_ext --inplace >/tmp/ab_head.log 2>&1; echo "built work tree rc=$?") &
wait
for r in $(seq ${R:-1}); do
  for c in $commits; do
    echo "== $c"
    (cd .ab/$c && GPURED_CACHE_DIR=/tmp/abc_$c PYTHONPATH=.:${PYTHONPATH:-} \
       timeout ${AB_TIMEOUT:-120} python3 "$script" "$@" 2>&1 | tail -${AB_TAIL:-3})
  done
  echo "== work tree"
  GPURED_CACHE_DIR=/tmp/abc_head PYTHONPATH=.:${PYTHONPATH:-} \
    timeout ${AB_TIMEOUT:-120} python3 "$script" "$@" 2>&1 | tail -${AB_TAIL:-3}
done
