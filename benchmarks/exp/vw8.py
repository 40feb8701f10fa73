"""8-byte reductions on a GPU: the auto plan's double2/long2 loads (vw 2,
ilp 2) against vw 4 with ilp 2 and 4, by kernel events, 1 GiB."""
import numpy as np
import gpured

rng = np.random.default_rng(0)
for dt in (np.float64, np.int64, np.uint64):
    a = (rng.standard_normal(2**27) * 1000).astype(dt)
    d = gpured.to_device(a)
    for op in ("sum", "min", "max", "argmax", "ptp", "nanmax", "var"):
        if op in ("nanmax", "var") and dt != np.float64:
            continue
        row = []
        for kn in ({}, {"vw": 2, "ilp": 2}, {"vw": 4, "ilp": 2}, {"vw": 4, "ilp": 4}, {"vw": 2, "ilp": 4}):
            try:
                r = gpured.timeit(op, d, reps=10, variant="subgroup", **kn)
                row.append("%s %.4f" % (kn or "auto", r["seconds"] * 1e3))
            except Exception as e:
                row.append("%s err" % kn)
        print("%-7s %-7s | %s" % (op, np.dtype(dt).name, " | ".join(row)), flush=True)
    del d
    gpured.empty_cache()
