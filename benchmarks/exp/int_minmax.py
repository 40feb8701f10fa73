"""min/max of int32 on a GPU (issue 15: 0.97 of CuPy where float32 runs at
0.99): the auto plan against other loads (vw), accumulators (ilp),
work-group sizes and group counts, kernel events (ms), 1 GiB, beside
float32's auto plan.

    bash benchmarks/gpu_run.sh exp benchmarks/exp/int_minmax.py
"""
import numpy as np

import gpured

rng = np.random.default_rng(0)
for dt in (np.float32, np.int32):
    a = (rng.standard_normal(2**28) * 1000).astype(dt)
    d = gpured.to_device(a)
    e = gpured.explain("max", d)
    print(np.dtype(dt).name, {k: e.get(k) for k in ("variant", "wg_size", "groups", "vw", "ilp",
                                                    "passes", "accumulator")}, flush=True)
    g0 = e.get("groups")
    kns = [{}]
    if dt == np.int32:
        kns += [{"vw": vw, "ilp": ilp} for vw in (4, 8) for ilp in (1, 2, 4)]
        kns += [{"wg_size": 512}, {"wg_size": 128}, {"groups": 2 * g0}, {"groups": g0 // 2}]
    for op in ("max", "min"):
        row = []
        for kn in kns:
            try:
                ts = [gpured.timeit(op, d, reps=10, **kn)["seconds"] for _ in range(3)]
                row.append("%s %.4f" % (kn or "auto", sorted(ts)[1] * 1e3))
            except Exception as ex:  # a plan the device refuses
                row.append("%s err %s" % (kn, str(ex)[:40]))
        print("%-4s %-7s | %s" % (op, np.dtype(dt).name, " | ".join(row)), flush=True)
    del d
