"""Issue target: on a CPU device, auto (built-in rules) within 10% of the
best variant/knobs gpured.tune() finds, for sum float32 at 1, 16, 256 MiB.
    GPURED_CACHE_DIR=/tmp/tune python3 benchmarks/tune_pocl.py"""
import gpured

res = gpured.tune(ops=("sum",), dtypes=("float32",), sizes=(2**20, 2**24, 2**28), reps=7)
print("| size | auto (built-in) | best found by tune() | search: auto / best ms "
      "| re-timed, interleaved: auto / best ms | auto/best |")
print("|---|---|---|---|---|---|")
for r in res:
    a, b, c = r["auto"], r["best"], r["confirm"]
    print("| %d MiB | %s | %s %s | %.3f / %.3f | %.3f / %.3f | %.2f |" % (
        r["nbytes"] >> 20, a["variant"], b["variant"], b["knobs"] or "",
        a["seconds"] * 1e3, b["seconds"] * 1e3, c["auto_seconds"] * 1e3,
        c["best_seconds"] * 1e3, c["auto_seconds"] / c["best_seconds"]))
