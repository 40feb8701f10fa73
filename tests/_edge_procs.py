"""Child processes of tests/test_numpy_edges.py (faults that must not take
the test run down with them: hangs, crashes, fork, signals, environment).

    python tests/_edge_procs.py items SET START   one JSON line per item of
                                                  SET from index START:
                                                  "START i desc" before it,
                                                  "END i {json}" after it
    python tests/_edge_procs.py fork CASE         CASE: used | unused | array
    python tests/_edge_procs.py sigint            the long-call child
    python tests/_edge_procs.py sigint_host F T   a host-path call of 1 GiB
                                                  (F: sum | cumsum | exact,
                                                  on T threads)
    python tests/_edge_procs.py env               import gpured, report

The parent (the test) reads the lines with a deadline per item, so a hang
or a crash names the item that caused it; the run then goes on from the
next item in a fresh child.  Every answer is checked against NumPy here,
in the child, and reported as a status: "ok", "rejected" (the validator
refused the knobs: ValueError, TypeError, gpured.VariantUnavailable),
"wrong" (an answer NumPy does not give) or "error" (any other exception).
"""
import json
import os
import sys
import time

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _say(*parts):
    print(*parts, flush=True)


# ---------------------------------------------------------------- references

def _runs(keys):
    """Start index of every run of equal consecutive keys."""
    if keys.size == 0:
        return np.zeros(0, np.intp)
    return np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])


def _ref_scan(op, a, axis, exclusive):
    f = {"cumsum": np.add, "cumprod": np.multiply, "cummin": np.minimum,
         "cummax": np.maximum}[op]
    if op in ("cumsum", "cumprod"):
        r = (np.cumsum if op == "cumsum" else np.cumprod)(a, axis=axis)
    else:
        r = f.accumulate(a.ravel() if axis is None else a,
                         axis=0 if axis is None else axis)
    if not exclusive:
        return r
    ax = 0 if axis is None else axis
    ident = {"cumsum": 0, "cumprod": 1}.get(op)
    if ident is None:
        if r.dtype.kind == "f":
            ident = np.inf if op == "cummin" else -np.inf
        else:
            info = np.iinfo(r.dtype)
            ident = info.max if op == "cummin" else info.min
    sh = list(r.shape)
    sh[ax] = 1
    first = np.full(sh, ident, r.dtype)
    return np.concatenate([first, np.delete(r, -1, axis=ax)], axis=ax)


def _ref_bykey(func, keys, values, num_keys):
    if func == "sum_by_key":
        out = np.zeros(num_keys, np.add.reduce(values[:1]).dtype)
        np.add.at(out, keys, values)
        return out
    starts = _runs(keys)
    if func == "reduce_by_key":
        return keys[starts], np.add.reduceat(values, starts)
    out = np.empty(values.shape, np.add.reduce(values[:1]).dtype)
    bounds = list(starts) + [keys.size]
    for s, e in zip(bounds[:-1], bounds[1:]):
        out[s:e] = np.cumsum(values[s:e])
    return out


def _same(got, exp):
    """Exact equality of values, dtype and shape (NaN equal to NaN)."""
    import gpured
    if isinstance(exp, tuple):
        return (isinstance(got, tuple) and len(got) == len(exp)
                and all(_same(g, e) for g, e in zip(got, exp)))
    if isinstance(got, gpured.Array):
        got = got.get()
    got, exp = np.asarray(got), np.asarray(exp)
    if got.dtype != exp.dtype or got.shape != exp.shape:
        return False
    return bool(np.array_equal(got, exp, equal_nan=exp.dtype.kind == "f"))


# ------------------------------------------------------------- the knob sweep

def _small(dtype, shape, seed, lo=0, hi=8):
    """Small integers (exact in float32 sums of a few thousand terms)."""
    rng = np.random.default_rng(seed)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def _sweep_items(family=None):
    """(desc, keys, thunk) for every knob combination of the sweep (or of
    one family: "reduce", "scan", "bykey").  A thunk returns (gpured's
    answer, NumPy's)."""
    import gpured
    dev = gpured.get_device()
    maxwg = int(dev["max_work_group_size"])
    wgs = sorted({1, 2, 64, maxwg})
    items = []

    # One dtype per family (every compiled kernel is shared by the layouts:
    # a cold kernel cache compiles each variant x wg_size once), three
    # layouts: one segment, rows, columns.
    red_inputs = [
        ("sum", _small(np.float32, (1000,), 1), None),
        ("sum", _small(np.float32, (6, 300), 2), 1),
        ("sum", _small(np.float32, (300, 6), 3), 0),
    ]
    extras = [{}, {"items": 1}, {"items": 1 << 16}, {"groups": 1}, {"groups": 65535}]
    for op, a, axis in red_inputs if family in (None, "reduce") else ():
        exp = getattr(np, op)(a, axis=axis)
        for variant in gpured.variants(op, a.dtype.name):
            for wg in wgs:
                for extra in extras:
                    kw = dict(variant=variant, wg_size=wg, **extra)
                    desc = "%s(%s %s, axis=%s, %s)" % (
                        op, a.dtype, a.shape, axis,
                        ", ".join("%s=%r" % kv for kv in kw.items()))

                    def thunk(op=op, a=a, axis=axis, kw=kw, exp=exp):
                        return getattr(gpured, op)(a, axis=axis, **kw), exp
                    items.append((desc, ((op, a.shape, axis, variant, wg),
                                         (op, variant, sorted(extra.items()))), thunk))

    scan_inputs = [
        ("cumsum", _small(np.float32, (1000,), 7), None),
        ("cumsum", _small(np.float32, (6, 300), 8), 1),
        ("cumsum", _small(np.float32, (300, 6), 9), 0),
    ]
    for op, a, axis in scan_inputs if family in (None, "scan") else ():
        exp = _ref_scan(op, a, axis, False)
        for variant in gpured.variants(op, a.dtype.name):
            for wg in wgs:
                for extra in extras:
                    kw = dict(variant=variant, wg_size=wg, **extra)
                    desc = "%s(%s %s, axis=%s, %s)" % (
                        op, a.dtype, a.shape, axis,
                        ", ".join("%s=%r" % kv for kv in kw.items()))

                    def thunk(op=op, a=a, axis=axis, kw=kw, exp=exp):
                        return getattr(gpured, op)(a, axis=axis, **kw), exp
                    items.append((desc, ((op, a.shape, axis, variant, wg),
                                         (op, variant, sorted(extra.items()))), thunk))

    rng = np.random.default_rng(11)
    keys_u = rng.integers(0, 50, 1000).astype(np.int32)           # unsorted
    keys_s = np.sort(rng.integers(0, 40, 1000)).astype(np.int64)  # runs
    vals = _small(np.float32, (1000,), 12)
    bk_inputs = [("sum_by_key", keys_u, vals, 50), ("sum_by_key", keys_s, vals, 40),
                 ("reduce_by_key", keys_s, vals, None),
                 ("scan_by_key", keys_s, vals, None)]
    for func, k, v, nk in bk_inputs if family in (None, "bykey") else ():
        exp = _ref_bykey(func, k, v, nk)
        for variant in gpured.variants_by_key(func, k.dtype.name, v.dtype.name):
            for wg in wgs:
                for extra in ({}, {"items": 1}, {"items": 1 << 16}):
                    kw = dict(variant=variant, wg_size=wg, **extra)
                    desc = "%s(keys %s%s, %s)" % (
                        func, k.dtype, " sorted" if k is keys_s else "",
                        ", ".join("%s=%r" % kv for kv in kw.items()))

                    def thunk(func=func, k=k, v=v, nk=nk, kw=kw, exp=exp):
                        args = (k, v) if nk is None else (k, v, nk)
                        return getattr(gpured, func)(*args, **kw), exp
                    items.append((desc, ((func, k is keys_s, variant, wg),
                                         (func, variant, sorted(extra.items()))), thunk))
    return [(d, [repr(k) for k in g], t) for d, g, t in items]


# Knob settings that make many pieces from one segment: reduce.c launched
# the group kernel in batches of (1 << 24) / parts segments, 0 when
# parts > 2^24 (an endless loop).  Each is run alone by the test.
def _bigparts_items():
    import gpured
    n = (1 << 24) + 1
    items = []

    def red(op, dtype, kw, shape=(n,), axis=None):
        def thunk():
            a = np.ones(shape, dtype)
            if op in ("argmin", "argmax"):
                a.reshape(-1)[-1] = 0 if op == "argmin" else 2
            return getattr(gpured, op)(a, axis=axis, **kw), getattr(np, op)(a, axis=axis)
        return ("%s(ones(%s, %s), axis=%s, %s)" % (op, shape, np.dtype(dtype).name, axis,
                                                    ", ".join("%s=%r" % x for x in kw.items())),
                thunk)

    items.append(red("sum", np.float32, dict(variant="naive", wg_size=1)))
    items.append(red("argmax", np.float32, dict(variant="naive", wg_size=1)))
    items.append(red("max", np.int8, dict(variant="divergence_free", wg_size=1), shape=(2, n),
                     axis=1))

    def scan():
        a = np.ones(n, np.int32)
        return gpured.cumsum(a, variant="naive", wg_size=1, items=1), np.cumsum(a)
    items.append(("cumsum(ones(%d, int32), variant='naive', wg_size=1, items=1)" % n, scan))
    return items


# Sizes and allocations (issue 14 (d)): one item per call, so that a crash
# (sum_by_key(num_keys=2**62) overran the heap) names its call.
def _alloc_items():
    import gpured
    items = []
    dev = gpured.get_device()
    limits = [int(dev.get(k, 0) or 0) for k in ("max_alloc_size", "global_mem_size")]

    def overflow(shape, dtype, fn="empty"):
        def thunk():
            # NumPy's answer: a byte size >= 2**63 raises before allocating
            try:
                np.empty(shape, dtype)
                want = None
            except Exception as e:
                want = type(e).__name__
            try:
                r = getattr(gpured, fn)(shape, dtype)
                return {"raised": None, "shape": list(r.shape), "nbytes": r.nbytes,
                        "want": want}
            except Exception as e:
                return {"raised": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
                        "msg": str(e), "want": want}
        return ("gpured.%s(%s, %s)" % (fn, shape, np.dtype(dtype).name), thunk)

    for shape, dt in [((2**33, 2**31), np.uint8), ((2**32, 2**32), np.uint8),
                      ((2**62,), np.float64), ((3, 2**62), np.uint8),
                      ((2**31, 2**31, 2), np.int8), ((2**62, 2), np.int16)]:
        items.append(overflow(shape, dt))
    items.append(overflow((2**33, 2**31), np.float32, "zeros"))

    def huge(desc, fn, asked):
        def thunk():
            try:
                r = fn()
                return {"raised": None, "asked": asked, "limits": limits,
                        "got": repr(type(r))}
            except Exception as e:
                return {"raised": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
                        "msg": str(e), "asked": asked, "limits": limits}
        return (desc, thunk)

    items.append(huge("gpured.empty(2**62, uint8)", lambda: gpured.empty(2**62, np.uint8), 2**62))
    items.append(huge("gpured.zeros((2**40,), float64)",
                      lambda: gpured.zeros((2**40,), np.float64), 2**43))
    items.append(huge("gpured.empty((2**31, 2**31), uint8)",
                      lambda: gpured.empty((2**31, 2**31), np.uint8), 2**62))
    k = np.array([0, 1, 2], np.int32)
    v = np.array([1.0, 2.0, 3.0], np.float32)
    items.append(huge("sum_by_key(3 keys, float32, num_keys=2**40)",
                      lambda: gpured.sum_by_key(k, v, 2**40), 2**40))
    items.append(huge("sum_by_key(3 keys, float64, num_keys=2**40, op='max')",
                      lambda: gpured.sum_by_key(k, v.astype(np.float64), 2**40, op="max"),
                      2**40))
    items.append(huge("sum_by_key(3 keys, float32, num_keys=2**62)",
                      lambda: gpured.sum_by_key(k, v, 2**62), 2**62))
    items.append(huge("sum_by_key(3 keys, float32, num_keys=2**40, deterministic=True)",
                      lambda: gpured.sum_by_key(k, v, 2**40, deterministic=True), 2**40))
    return items


SETS = {"sweep": _sweep_items, "sweep_reduce": lambda: _sweep_items("reduce"),
        "sweep_scan": lambda: _sweep_items("scan"), "sweep_bykey": lambda: _sweep_items("bykey"),
        "bigparts": _bigparts_items, "alloc": _alloc_items}


def _classify(thunk):
    import gpured
    try:
        res = thunk()
    except (ValueError, TypeError, gpured.VariantUnavailable) as e:
        return {"status": "rejected", "detail": "%s: %s" % (type(e).__name__, e)}
    except Exception as e:  # noqa: BLE001 - reported to the parent
        return {"status": "error", "detail": "%s: %s" % (type(e).__name__, e)}
    if isinstance(res, dict):  # the alloc items report raw facts
        return {"status": "facts", "detail": res}
    got, exp = res
    if _same(got, exp):
        return {"status": "ok"}
    g = got.get() if isinstance(got, gpured.Array) else got
    return {"status": "wrong", "detail": "got %r, numpy %r" % (
        np.asarray(g).ravel()[:8], np.asarray(exp).ravel()[:8])}


def _grouped(items):
    """(desc, keys, thunk): an item of the sweep carries two keys, its
    kernel (op, layout, variant, wg_size) and its knob setting (op,
    variant, items/groups); the other items only their own description."""
    return [it if len(it) == 3 else (it[0], [it[0]], it[1]) for it in items]


def run_items(name, start, skip_groups=()):
    """Run SETS[name] from item ``start``; items with a key in
    ``skip_groups`` (an item with that key hung or crashed) are reported
    as "skipped" without running."""
    import gpured  # noqa: F401 - import before the first START
    items = _grouped(SETS[name]())
    _say("COUNT", len(items))
    for i in range(start, len(items)):
        desc, group, thunk = items[i]
        if any(k in skip_groups for k in group):
            _say("END", i, json.dumps({"status": "skipped"}))
            continue
        _say("START", i, desc)
        _say("GROUP", i, json.dumps(group))
        t0 = time.perf_counter()
        r = _classify(thunk)
        r["seconds"] = round(time.perf_counter() - t0, 3)
        _say("END", i, json.dumps(r))
    _say("DONE")


# ---------------------------------------------------------------------- fork

def run_fork(case, timeout):
    import multiprocessing as mp

    import gpured
    a = np.arange(1000, dtype=np.float32)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    if case in ("used", "array"):
        assert float(gpured.sum(a)) == 499500.0
        gpured.cumsum(b, axis=1)
    d = gpured.to_device(a) if case == "array" else None
    ctx = mp.get_context("fork")
    rd, wr = ctx.Pipe(duplex=False)

    def child():
        try:
            x = d if d is not None else a
            s = gpured.sum(x)
            s = float(s.get() if isinstance(s, gpured.Array) else s)
            c = gpured.cumsum(b, axis=1)
            c = c.get() if isinstance(c, gpured.Array) else c
            e = gpured.to_device(b).get()
            ok = (s == 499500.0 and np.array_equal(c, np.cumsum(b, axis=1))
                  and np.array_equal(e, b))
            wr.send({"child": "ok" if ok else "wrong", "sum": s})
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            wr.send({"child": "raised", "type": type(e).__name__, "msg": str(e)})

    t0 = time.perf_counter()
    p = ctx.Process(target=child)
    p.start()
    if rd.poll(timeout):
        res = rd.recv()
    else:
        res = {"child": "hang"}
    res["child_seconds"] = round(time.perf_counter() - t0, 2)
    p.join(max(1.0, timeout - (time.perf_counter() - t0)))
    res["child_exited"] = not p.is_alive()
    if p.is_alive():
        p.kill()
        p.join()
    # the parent keeps working: old and new arrays, reductions, scans
    try:
        ok = float(gpured.sum(a)) == 499500.0
        ok &= np.array_equal(gpured.cumsum(b, axis=1), np.cumsum(b, axis=1))
        if d is not None:
            ok &= float(gpured.sum(d).get()) == 499500.0
        ok &= np.array_equal(gpured.to_device(b).get(), b)
        res["parent"] = "ok" if ok else "wrong"
    except BaseException as e:  # noqa: BLE001
        res["parent"] = "raised %s: %s" % (type(e).__name__, e)
    _say("RESULT", json.dumps(res))


# -------------------------------------------------------------------- SIGINT

def run_sigint():
    import gpured
    cpus = [d for d in gpured.devices() if d["type"] == "CPU"]
    if cpus:
        gpured.set_device(cpus[0]["index"])
    dev = gpured.get_device()

    def timed(n, kw, reps=2):
        x = np.ones(n, np.float32)
        best = None
        for _ in range(reps):
            t0 = time.perf_counter()
            gpured.cumsum(x, **kw)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        return best

    cap = 1 << 28  # 1 GiB in, 1 GiB out
    target = 4.0
    chosen = None
    for kw in ({}, {"variant": "naive"}):
        n0 = 1 << 22
        rate = timed(n0, kw) / n0
        n = n0
        while n < cap and rate * n < target:
            n *= 2
        if rate * n >= 0.75 * target:
            chosen = (n, kw, rate * n)
            break
    if chosen is None:
        chosen = (cap, {"variant": "naive"}, rate * cap)
    n, kw, predicted = chosen
    a = np.ones(n, np.float32)
    out = np.empty(n, np.float32)
    _say("START", json.dumps({"n": n, "kw": kw, "predicted": round(predicted, 2),
                              "device": dev["name"]}))
    t0 = time.perf_counter()
    try:
        gpured.cumsum(a, out=out, **kw)
        _say("RETURNED", round(time.perf_counter() - t0, 3))
    except KeyboardInterrupt:
        _say("INTERRUPTED", round(time.perf_counter() - t0, 3))
    del a
    # the library keeps working, out too
    try:
        s = float(gpured.sum(np.arange(10.0)))
        c = gpured.cumsum(np.ones(1000, np.float32), out=out[:1000])
        d = gpured.to_device(np.arange(5, dtype=np.int32))
        ok = (s == 45.0 and c is not None and np.array_equal(out[:1000], np.arange(1, 1001))
              and int(gpured.max(d).get()) == 4)
        _say("AFTER", "ok" if ok else "wrong")
    except BaseException as e:  # noqa: BLE001
        _say("AFTER", "raised %s: %s" % (type(e).__name__, e))


def _host_only(gpured, threads):
    """Every device priced out (a call costs 1000 s): NumPy calls run on
    the host path, on `threads` threads (0: auto)."""
    for d in gpured.devices():
        gpured.set_rates(device=d["index"], device_call_us=1e9)
    gpured.set_host_threads(threads)


def _host_call(gpured, func, a, out=None):
    if func == "cumsum":
        return gpured.cumsum(a, out=out)
    return gpured.sum(a, exact=func == "exact")


def _host_ok(func, got, b):
    """gpured's answer on b against NumPy's (float64 references: float32
    sums accumulate in double on the host path; exact is rounded once)."""
    if func == "cumsum":
        return np.allclose(got, np.cumsum(b, dtype=np.float64), rtol=1e-6, atol=0)
    ref = np.float32(np.sum(b, dtype=np.float64))
    return abs(float(got) - float(ref)) <= 2 * float(np.spacing(ref))


def run_sigint_host(func, threads):
    """Ctrl-C in a host-path call (issue 39): 1 GiB of float32 (2**28
    elements), the call looped (on the 2-core test host sum takes ~0.1 s,
    cumsum and exact ~0.5 s: SIGINT meets their first call).  "START"
    just before the calls, then "INTERRUPTED secs" (or "RETURNED secs"),
    then "AFTER ok": the out's guards and the input untouched, and the
    same function, again on the host path, right."""
    import gpured
    _host_only(gpured, threads)
    n = 1 << 28
    a = np.ones(n, np.float32)
    out = None
    if func == "cumsum":
        # out with 16 guard elements either side: nothing written there
        full = np.empty(n + 32, np.float32)  # (pages touched by the call)
        full[:16] = full[-16:] = -7.0
        out = full[16:-16]
    _host_call(gpured, func, a[:1 << 21], None if out is None else out[:1 << 21])
    _say("START", json.dumps({"func": func, "threads": gpured.host_threads()}))
    t0 = time.perf_counter()
    try:
        # looped: a faster machine than the 2-core test host still meets
        # SIGINT inside a call (sum's one call is ~0.1 s there)
        for _ in range(200 if func == "sum" else 40):
            _host_call(gpured, func, a, out)
        _say("RETURNED", round(time.perf_counter() - t0, 3))
    except KeyboardInterrupt:
        _say("INTERRUPTED", round(time.perf_counter() - t0, 3))
    try:
        ok = bool(np.all(a[::4099] == 1))
        if out is not None:
            ok &= bool(np.all(full[:16] == -7.0) and np.all(full[-16:] == -7.0))
        b = np.random.default_rng(39).random(1 << 21, dtype=np.float32)
        for _ in range(2):  # the pool again, twice
            ok &= _host_ok(func, _host_call(gpured, func, b,
                                            None if out is None else out[:1 << 21]), b)
        _say("AFTER", "ok" if ok else "wrong")
    except BaseException as e:  # noqa: BLE001
        _say("AFTER", "raised %s: %s" % (type(e).__name__, e))


# ---------------------------------------------------------------------- env

def run_env():
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            import gpured
        except BaseException as e:  # noqa: BLE001
            _say("RESULT", json.dumps({"import": "%s: %s" % (type(e).__name__, e)}))
            return
    res = {"import": "ok",
           "warnings": [[c.category.__name__, str(c.message)] for c in w]}
    try:
        res["ndevices"] = len(gpured.devices())
        res["device"] = gpured.get_device()["index"]
        res["sum"] = float(gpured.sum(np.arange(10.0)))
    except BaseException as e:  # noqa: BLE001
        res["after"] = "%s: %s" % (type(e).__name__, e)
    _say("RESULT", json.dumps(res))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "items":
        run_items(sys.argv[2], int(sys.argv[3]),
                  set(json.loads(sys.argv[4])) if len(sys.argv) > 4 else ())
    elif cmd == "fork":
        run_fork(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 10.0)
    elif cmd == "sigint":
        run_sigint()
    elif cmd == "sigint_host":
        run_sigint_host(sys.argv[2], int(sys.argv[3]))
    elif cmd == "env":
        run_env()
    else:
        raise SystemExit("unknown command %r" % cmd)
