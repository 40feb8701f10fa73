"""What one synchronous call costs over its kernels (device arrays): a
loop of calls that each wait (argmax then the index read back, a sum read
back, nanargmax's check), beside the same calls left asynchronous, wall
clock (ms).  (2026-11-27, H100, 1 GiB: the wait as clWaitForEvents or as
a poll without sched_yield measured slower than gpured's poll with it;
reads of a few bytes into pageable memory cost 20-70 us a call more than
the wait alone, hence runtime.c's pinned memory for small reads.)

    bash benchmarks/gpu_run.sh exp benchmarks/exp/sync_cost.py [MiB]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402

mib = float(sys.argv[1]) if len(sys.argv) > 1 else 1024
a = np.random.default_rng(0).standard_normal(int(mib * 2**20) // 4).astype(np.float32)
d = gpured.to_device(a)
small = gpured.to_device(a[:256])
s = gpured.synchronize
rows = [("argmax, async", lambda: gpured.argmax(d)),
        ("argmax + index read", lambda: gpured.argmax(d).get()),
        ("nanargmax (checked)", lambda: gpured.nanargmax(d)),
        ("sum, async", lambda: gpured.sum(d)),
        ("sum + read", lambda: gpured.sum(d).get()),
        ("sum then synchronize", lambda: (gpured.sum(d), s())),
        ("1 KiB sum + read", lambda: gpured.sum(small).get()),
        ("1 KiB sum then synchronize", lambda: (gpured.sum(small), s()))]
print(gpured.get_device()["name"], "%g MiB" % mib)
for name, f in rows:
    print("  %-28s %.4f ms" % (name, loop_ms(f, s, 10 if mib >= 64 else 200)), flush=True)
