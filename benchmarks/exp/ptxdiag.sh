# Registers, spills and shared memory of one kernel as the H100 builds it
# (ptxas -v on the PTX gpured cached), e.g.
#   bash benchmarks/exp/ptxdiag.sh gr_sr_sweep_u
#   bash benchmarks/exp/ptxdiag.sh gr_reduce "gpured.sum(np.ones(1 << 20, np.float32))"
# The snippet (default: a deterministic sum_by_key, which builds the radix
# sort's program) runs first so that the program is in the cache.
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=. GPURED_DEVICE=nvidia GPURED_CACHE_DIR=/tmp/gc
python3 setup.py -q build_ext --inplace 2>&1 | grep error
python3 -c "
import numpy as np, gpured
k = np.random.default_rng(0).integers(0, 1 << 20, 100000); v = np.ones(k.size)
${2:-gpured.sum_by_key(k, v, 1 << 20, deterministic=True)}
"
f=$(grep -l "$1" /tmp/gc/*.bin | head -1)
python3 - "$f" <<'PY'
import sys
t = open(sys.argv[1], 'rb').read().decode('latin1')
open('/tmp/k.ptx', 'w').write(t[t.find('.version'):t.rfind('}') + 1].replace('\0', '') + '\n')
PY
/usr/local/cuda/bin/ptxas -v --gpu-name sm_90 /tmp/k.ptx -o /tmp/k.cubin 2>&1 | grep -A2 "properties for $1\b"
