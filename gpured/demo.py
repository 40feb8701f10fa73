"""``python -m gpured.demo``: the devices, one real reduction checked
against NumPy, and its time."""
import time

import numpy as np

import gpured


def main():
    print("OpenCL devices:")
    cur = gpured.get_device()
    for d in gpured.devices():
        mark = "*" if d["index"] == cur["index"] else " "
        print(" %s %s  %s [%s]  %d CUs, max work-group %d, fp64 %s, "
              "sub-groups %s, work-group collectives %s"
              % (mark, d["index"], d["name"], d["type"], d["compute_units"],
                 d["max_work_group_size"], d["fp64"], d["subgroups"],
                 d["wg_collectives"]))
    n = 1 << 24
    rng = np.random.default_rng(2026)
    a = rng.standard_normal(n).astype(np.float32)
    print("\nsum of %d float32 (%.0f MiB) on %s:" % (n, a.nbytes / 2**20, cur["name"]))
    t = time.perf_counter()
    got = gpured.sum(a)              # first call: builds (or loads) the kernel
    first = time.perf_counter() - t
    reps = []
    for _ in range(5):
        t = time.perf_counter()
        got = gpured.sum(a)
        reps.append(time.perf_counter() - t)
    t = time.perf_counter()
    want = np.sum(a)
    t_np = time.perf_counter() - t
    exact = np.sum(a, dtype=np.float64)
    plan = gpured.explain("sum", a)
    print("  gpured.sum  = %r   (%.2f ms; first call %.0f ms incl. kernel build/cache)"
          % (got, 1e3 * min(reps), 1e3 * first))
    print("  numpy.sum   = %r   (%.2f ms)" % (want, 1e3 * t_np))
    print("  float64 sum = %r" % exact)
    print("  |error| gpured %.3g, numpy %.3g" % (abs(float(got) - exact),
                                                abs(float(want) - exact)))
    print("  variant: %s -- %s" % (plan["variant"], plan["why"]))
    ok = abs(float(got) - exact) <= max(abs(float(want) - exact),
                                        abs(exact) * 2.0**-23)
    print("  check against NumPy: %s" % ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
