"""gpured.tune(): measure the variants and knobs on the current device and
keep the winners for auto.

The table lives next to the kernel cache (``<cache dir>/tuned.json``), keyed
by device name, operation, input dtype and size class (floor(log2(bytes))).
Its ``"_rates"`` entry keeps the placement model's measured rates per
device name (:func:`gpured.measure_rates`).
It is loaded into the C core at import; the policy layer (``csrc/policy.c``
keeps the table, ``csrc/plan_reduce.c`` after issue 38's re-cut) consults it
for full reductions of a tuned (op, dtype, size class) and falls back to its built-in
rules otherwise.  ``gpured.explain`` says ``tuned: True`` when it applies.
"""
import numpy as np

from . import _core
from ._place import (load_rates, load_split, load_threads, measure_rates,
                     measure_split)
from ._reduce import timeit, variants
from ._table import read as _read, write as _write

# The tuned table is keyed by the core operator (what the planner sees).
_OPS = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum",
        "all": "all", "any": "any", "mean": "add", "argmin": "argmin",
        "argmax": "argmax"}

def _bar(total, desc, enabled=None):
    """A tqdm progress bar (on stderr; a widget in notebooks) when tqdm is
    importable and ``enabled`` is not False, else None."""
    if enabled is False:
        return None
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tqdm.auto without ipywidgets
            from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="run", leave=False)

# Knob grids per variant; the variant's own defaults are always measured too.
_GRIDS = {
    "vector": [dict(wg_size=w, ilp=i) for w in (128, 256, 512) for i in (1, 2, 4)],
    "subgroup": [dict(wg_size=w, ilp=i) for w in (128, 256, 512) for i in (1, 2, 4)],
    "stride_local": [dict(wg_size=w, ilp=i) for w in (128, 256) for i in (2, 4, 8)],
    "chunked": [dict(wg_size=w, ilp=i) for w in (1, 4, 16) for i in (1, 2, 4)],
    "stride_global": [dict(wg_size=w) for w in (64, 256)],
}


def load():
    """Load the tuned table and the measured rates into the C core (done
    at import)."""
    rows = []
    data = _read()
    load_rates(data.get("_rates"))
    if "_threads" in data:
        load_threads(data["_threads"])
    if "_split" in data:
        load_split(data["_split"])
    for device, entries in data.items():
        for e in entries if isinstance(entries, list) else []:
            try:
                rows.append((str(device), _OPS[e["op"]], np.dtype(e["dtype"]),
                             int(e["size_class"]), str(e["variant"]),
                             int(e["wg_size"]), int(e["ilp"]), int(e["vw"]),
                             int(e["groups"])))
            except (KeyError, TypeError, ValueError):
                continue  # a damaged entry is ignored, never trusted
    _core.set_tuned(rows)
    return len(rows)


def _array(dtype, n, rng):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    return rng.integers(0, 100, n).astype(dt)


def tune(ops=("sum",), dtypes=("float32",), sizes=(2**20, 2**24, 2**28),
         reps=5, save=True, verbose=False, progress=None, rates=True):
    """Measure every variant (and a small grid of knobs) for each op, dtype
    and size (bytes), keep the fastest per (op, dtype, size class) for auto.
    ``rates=True`` measures the placement model's rates of the device too
    (:func:`gpured.measure_rates`), kept with the table when ``save``.

    A progress bar shows while it measures when tqdm is installed
    (``progress=False``: none); ``verbose=True`` prints every measurement.

    Returns a list of dicts, one per (op, dtype, size): ``best`` (variant,
    knobs, seconds), ``auto`` (the built-in choice and its seconds, measured
    without the table), ``all`` (every measurement) and ``confirm`` (auto and
    the winner timed again, interleaved: ``auto_seconds``, ``best_seconds``).
    """
    dev = _core.get_device()
    rng = np.random.default_rng(0)
    results = []
    table = _read()
    mine = [e for e in table.get(dev["name"], [])
            if not (e.get("op") in ops and e.get("dtype") in
                    [np.dtype(d).name for d in dtypes] and
                    e.get("size_class") in [_core.size_class(s) for s in sizes])]
    _core.set_tuned([])  # measure the built-in auto, not an older table
    cases = [(op, np.dtype(dtype), nbytes) for op in ops for dtype in dtypes
             for nbytes in sizes
             if int(nbytes) // np.dtype(dtype).itemsize >= 1
             and nbytes <= dev["max_alloc_size"]]
    # (the per-segment kernels read a one-segment input with a work-item
    # or a warp: rows and columns are theirs, not whole arrays)
    plans = {(op, dt): [(v, k) for v in variants(op, dt)
                        if v not in ("segment_per_item", "segment_per_warp")
                        for k in [{}] + _GRIDS.get(v, [])]
             for op, dt, _ in cases}
    bar = _bar(sum(len(plans[op, dt]) + 10 for op, dt, _ in cases),
               "gpured.tune on " + dev["name"][:30], progress)
    say = bar.write if bar is not None else print
    try:
        for op, dt, nbytes in cases:
            _tune_one(op, dt, nbytes, plans[op, dt], reps, rng, verbose, bar, say,
                      mine, results)
    finally:
        if bar is not None:
            bar.close()
    table[dev["name"]] = mine
    if save:
        _write(table)
    load() if save else _core.set_tuned([
        (dev["name"], _OPS[e["op"]], np.dtype(e["dtype"]), e["size_class"],
         e["variant"], e["wg_size"], e["ilp"], e["vw"], e["groups"]) for e in mine])
    if rates:
        measure_rates(save=save)
        measure_split(save=save)  # (two devices or more)
    return results


def _tune_one(op, dt, nbytes, plan, reps, rng, verbose, bar, say, mine, results):
    """Measure one (op, dtype, size): every (variant, knobs) of ``plan``,
    then auto and the winner again; append to ``mine`` and ``results``."""
    n = int(nbytes) // dt.itemsize
    a = _array(dt, n, rng)
    meas = []
    if bar is not None:
        bar.set_postfix_str("%s %s %d B" % (op, dt.name, nbytes))
    for v, knobs in plan:
        if bar is not None:
            bar.update(1)
        try:
            r = timeit(op, a, reps=reps, variant=v, **knobs)
        except ValueError:
            continue  # knob outside this device's range
        meas.append(dict(variant=r["plan"]["variant"], requested=v,
                         knobs=knobs, seconds=r["seconds"],
                         plan=r["plan"]))
        if verbose:
            say("%-6s %-8s %10d B %-16s %-26s %.3f ms"
                % (op, dt.name, nbytes, v, knobs, r["seconds"] * 1e3))
    auto = [m for m in meas if m["requested"] == "auto"][0]
    best = min((m for m in meas if m["requested"] != "auto"),
               key=lambda m: m["seconds"])
    # The minimum of many noisy medians favours whichever candidate was
    # lucky: time auto and the winner again, interleaved, before comparing.
    ta, tb = [], []
    for _ in range(5):
        ta.append(timeit(op, a, reps=reps)["seconds"])
        tb.append(timeit(op, a, reps=reps, variant=best["requested"],
                         **best["knobs"])["seconds"])
        if bar is not None:
            bar.update(2)
    confirm = dict(auto_seconds=sorted(ta)[2], best_seconds=sorted(tb)[2])
    p = best["plan"]
    mine.append(dict(op=op, dtype=dt.name, size_class=_core.size_class(nbytes),
                     variant=p["variant"], wg_size=p["wg_size"], ilp=p["ilp"],
                     vw=p["vw"], groups=p["groups"], seconds=best["seconds"]))
    results.append(dict(op=op, dtype=dt.name, nbytes=int(nbytes),
                        best=best, auto=auto, all=meas, confirm=confirm))
