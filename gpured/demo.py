"""``python -m gpured.demo`` (``make demo``): the devices, then one real
reduction checked against NumPy, run twice and each time said where it ran:

1. a NumPy array, wherever the placement model sends it (on a CPU-only
   machine: gpured's C host path, no OpenCL at all; on a GPU machine: the GPU);
2. the same data as a device Array (``gpured.to_device``), which always runs
   on the device through its OpenCL kernel: the variant and kernel are printed.
"""
import time

import numpy as np

import gpured


def _devices():
    print("OpenCL devices (* = current):")
    cur = gpured.get_device()
    for d in gpured.devices():
        mark = "*" if d["index"] == cur["index"] else " "
        print(" %s %s  %s [%s]  %d CUs, max work-group %d, fp64 %s, "
              "sub-groups %s, work-group collectives %s"
              % (mark, d["index"], d["name"], d["type"], d["compute_units"],
                 d["max_work_group_size"], d["fp64"], d["subgroups"],
                 d["wg_collectives"]))
    return cur


def _timed(x, reps=5):
    """(result, first call's seconds, best of reps' seconds)."""
    t = time.perf_counter()
    got = gpured.sum(x)
    if isinstance(got, gpured.Array):
        got = got.get()[()]        # the 0-d result as a NumPy scalar
    first = time.perf_counter() - t
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        r = gpured.sum(x)
        if isinstance(r, gpured.Array):
            r = r.get()            # waits for the device
        best = min(best, time.perf_counter() - t)
    return got, first, best


def _where(plan):
    """One line saying where a call ran, from explain()'s fields."""
    if plan.get("placement") == "host":
        return "gpured's C host path (typed loops in C, no OpenCL call)"
    if plan.get("placement") == "split":
        return "split between %s" % ", ".join(plan.get("device", []))
    return ("OpenCL device '%s': kernel %s, variant %s, %s pass(es)"
            % (plan.get("device"), plan.get("kernel"), plan.get("variant"),
               plan.get("passes")))


def _report(label, got, first, best, plan, exact, tol):
    err = abs(float(got) - exact)
    print("  %-22s = %r   (%.2f ms; first call %.0f ms)"
          % (label, got, 1e3 * best, 1e3 * first))
    print("      ran on: %s" % _where(plan))
    print("      why: %s" % plan.get("placement_why", plan.get("why")))
    if plan.get("placement") != "host":
        print("      variant %s: %s" % (plan.get("variant"), plan.get("why")))
    print("      |error| %.3g (float64 reference)" % err)
    return err <= tol


def main():
    cur = _devices()
    n = 1 << 24
    a = np.random.default_rng(2026).standard_normal(n).astype(np.float32)
    exact = float(np.sum(a, dtype=np.float64))
    t = time.perf_counter()
    want = np.sum(a)
    t_np = time.perf_counter() - t
    tol = max(abs(float(want) - exact), abs(exact) * 2.0**-23)
    print("\nsum of %d float32 (%.0f MiB); current device: %s"
          % (n, a.nbytes / 2**20, cur["name"]))
    print("  %-22s = %r   (%.2f ms)" % ("numpy.sum", want, 1e3 * t_np))
    print("  %-22s = %r" % ("float64 sum", exact))

    ok = True
    got, first, best = _timed(a)
    ok &= _report("gpured.sum(ndarray)", got, first, best,
                  gpured.explain("sum", a), exact, tol)
    print("\n  the same data as a device Array (gpured.to_device): always the "
          "device's kernel\n  (first call includes the kernel build, or its "
          "load from the cache)")
    with gpured.to_device(a) as d:
        got, first, best = _timed(d)
        ok &= _report("gpured.sum(Array)", got, first, best,
                      gpured.explain("sum", d), exact, tol)
    print("\ncheck against NumPy: %s" % ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
