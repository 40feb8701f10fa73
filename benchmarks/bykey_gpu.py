"""GPU targets of issue 5 (run by benchmarks/bykey_gpu.sh on an NVIDIA GPU).

  A. 10 Mi float64 values into 1 Mi int64 keys: sum_by_key (every variant)
     vs torch.index_add_, sorted / partly sorted / random keys; float32 too
     (the seed's experiment).
  B. reduce_by_key on sorted keys vs torch.unique_consecutive +
     torch.segment_reduce.
  C. reduce_by_key, 2^28 int32 keys in runs of 64, float32 values, vs CUB's
     1.135 ms (H100): auto (lookback), lookback geometries, sorted_segments.
gpured: device times by OpenCL profiling events (key check included, inputs
on the device).  torch: CUDA events, inputs on the device, median of reps.
"""
import sys

import numpy as np

import gpured
from gpured import _bykey as B

REPS = 10


def torch_time(fn, reps=REPS):
    import torch
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return float(np.median(ts))


def keys_for(order, nk, per, rng, kdt=np.int64):
    k = np.repeat(np.arange(nk), per)
    if order == "partly":
        k = rng.permuted(k.reshape(-1, 64), axis=1).ravel()
    elif order == "random":
        k = rng.permutation(k)
    return k.astype(kdt)


def main():
    try:
        import torch
        has_torch = torch.cuda.is_available()
    except Exception as e:  # pragma: no cover
        print("torch unavailable:", e)
        has_torch = False
    rng = np.random.default_rng(0)
    print("device:", gpured.get_device()["name"])
    nk, per = 1 << 20, 10
    summary = []
    for vdt in (np.float64, np.float32):
        v = rng.random(nk * per).astype(vdt)
        for order in ("sorted", "partly", "random"):
            k = keys_for(order, nk, per, rng)
            ref = np.bincount(k, v, minlength=nk)
            row = "sum_by_key %-7s %-6s" % (vdt.__name__, order)
            t_torch = None
            if has_torch:
                tk = torch.from_numpy(k).cuda()
                tv = torch.from_numpy(v).cuda()
                out = torch.zeros(nk, dtype=tv.dtype, device="cuda")
                t_torch = torch_time(lambda: out.zero_().index_add_(0, tk, tv))
                row += " | torch.index_add_ %.3f ms" % (t_torch * 1e3)
            for var in gpured.variants_by_key("sum_by_key", "int64", vdt, "sum"):
                kw = {} if var == "auto" else {"variant": var}
                if var == "sorted_segments" and order != "sorted":
                    continue
                r = B.timeit_by_key("sum_by_key", k, v, "sum", num_keys=nk,
                                    reps=REPS, **kw)
                err = np.abs(r["result"] - ref).max() / np.abs(ref).max()
                name = ("auto=" + r["plan"]["variant"]) if var == "auto" else var
                ratio = (" x%.2f" % (t_torch / r["seconds"])) if t_torch else ""
                row += " | %s %.3f ms%s (err %.0e)" % (name, r["seconds"] * 1e3, ratio, err)
                if var == "auto" and vdt == np.float64 and order in ("sorted", "random"):
                    summary.append("TARGET sum_by_key f64 %s: auto %.3f ms vs torch %s -> x%s"
                                   % (order, r["seconds"] * 1e3,
                                      "%.3f ms" % (t_torch * 1e3) if t_torch else "n/a",
                                      "%.2f" % (t_torch / r["seconds"]) if t_torch else "n/a"))
            print(row, flush=True)
    # B: reduce_by_key vs unique_consecutive + segment_reduce
    v = rng.random(nk * per)
    k = keys_for("sorted", nk, per, rng)
    r = B.timeit_by_key("reduce_by_key", k, v, "sum", reps=REPS)
    st = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    ok = np.array_equal(r["result"][0], k[st]) and np.allclose(r["result"][1], np.add.reduceat(v, st))
    line = "reduce_by_key f64 10Mi/1Mi sorted: gpured %.3f ms (correct %s)" % (r["seconds"] * 1e3, ok)
    if has_torch:
        tk = torch.from_numpy(k).cuda()
        tv = torch.from_numpy(v).cuda()

        def tr():
            u, c = torch.unique_consecutive(tk, return_counts=True)
            return u, torch.segment_reduce(tv, "sum", lengths=c)
        t = torch_time(tr)
        line += " | torch unique_consecutive+segment_reduce %.3f ms -> x%.2f" % (t * 1e3, t / r["seconds"])
    print(line, flush=True)
    summary.append("TARGET " + line)
    # C: 2^28 int32 keys in runs of 64, float32 values
    n = 1 << 28
    k = (np.arange(n, dtype=np.int64) >> 6).astype(np.int32)
    v = np.ones(n, np.float32)
    for kw in ({}, {"variant": "lookback", "items": 8},
               {"variant": "lookback", "wg_size": 128, "items": 16},
               {"variant": "lookback", "wg_size": 128, "items": 32},
               {"variant": "sorted_segments"}):
        r = B.timeit_by_key("reduce_by_key", k, v, "sum", reps=REPS, **kw)
        ok = r["result"][0].size == n // 64 and bool(np.all(r["result"][1] == 64))
        line = ("reduce_by_key 2^28 int32 runs of 64 f32 %s wg=%d items=%s: %.3f ms, %.0f G items/s "
                "(CUB 1.135 ms -> x%.2f; correct %s) times %s"
                % (("auto=" if not kw else "") + r["plan"]["variant"], r["plan"]["wg_size"],
                   r["plan"]["items"], r["seconds"] * 1e3, n / r["seconds"] / 1e9,
                   1.135e-3 / r["seconds"], ok, ["%.3f" % (t * 1e3) for t in r["times"][:4]]))
        print(line, flush=True)
        summary.append("TARGET " + line)
    print("\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
