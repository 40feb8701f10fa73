# The warp rows kernel's PTX and SASS as the H200 builds it (short rows
# 2^24 x 16 float32 sum): registers, spills, instruction counts, into $OUT.
#   bash benchmarks/exp/ptx_rows.sh "KNOBS"   e.g. "ilp=1"
mkdir -p /tmp/icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd PYTHONPATH=. GPURED_DEVICE=nvidia GPURED_CACHE_DIR=/tmp/gc
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
python3 setup.py -q build_ext --inplace 2>&1 | grep error
rm -rf /tmp/gc
python3 -c "
import numpy as np, gpured
d = gpured.to_device(np.ones((1 << 12, 16), np.float32))
print(gpured.explain('sum', d, axis=1, $1)['why'])
print(gpured.sum(d, axis=1, $1)[:3])
"
for f in $(grep -l "gr_reduce_items" /tmp/gc/*.bin); do
python3 - "$f" <<'PY'
import sys
t = open(sys.argv[1], 'rb').read().decode('latin1')
open('/tmp/k.ptx', 'w').write(t[t.find('.version'):t.rfind('}') + 1].replace('\0', '') + '\n')
PY
cp /tmp/k.ptx $OUT/$(basename $f).ptx
/usr/local/cuda/bin/ptxas -v --gpu-name sm_90 /tmp/k.ptx -o /tmp/k.cubin 2>&1 | grep -A2 "gr_reduce_items"
/usr/local/cuda/bin/cuobjdump -sass -fun gr_reduce_items /tmp/k.cubin > $OUT/$(basename $f).sass 2>&1
grep -cE "^\s+/\*[0-9a-f]{4}\*/" $OUT/$(basename $f).sass
done
