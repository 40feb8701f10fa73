"""Placement: where a call on a NumPy array runs (issue 12).

The rule is in C (csrc/policy.c, ``gr_place``): a host array is reduced or
scanned on the host, in C, when the model says that finishes first (a
call overhead plus bytes over a rate, for the host path and for each
device, per family: reduction, argmin/argmax, column reduction, scan);
otherwise on the device expected to finish first.  That is the current
device when it was pinned (``GPURED_DEVICE``, :func:`gpured.set_device`);
unpinned, any listed device with fp64 where the current one has it (a CPU
device reads the NumPy array in place, a GPU's rates include the copies:
on a GPU workstation large NumPy arrays go to the CPU's OpenCL device).
A device that fails to open sends the call back to the current one.
Device Arrays always run on their own device, and a call with knobs
(``variant=``, ``wg_size=``, ``device=``, ...) runs the named or current
device's kernels.  :func:`explain` says where a call runs and why
(``placement``, ``placement_why``, ``device``).

This module is the Python face: :func:`placement` switches the rule off
and on, :func:`rates` / :func:`set_rates` read and replace the model's
rates, and :func:`measure_rates` measures them on this machine (with
:func:`gpured.tune` as well).  A large call whose wall time is more than
4x from its estimate re-measures its side for the rest of the process
(issue 39, csrc/place_remeasure.c): :func:`remeasure` lists the factors,
:func:`set_remeasure` sets them.
"""
import os
import time

import numpy as np

from . import _core
from ._table import read as _read, write as _write

FAMILIES = ("reduce", "arg", "column", "scan")


def placement(mode=None):
    """The placement rule: ``"auto"`` (the default: each NumPy array where
    it finishes first: the host path, the current device, or -- unless the
    current device was pinned by ``GPURED_DEVICE`` or ``set_device`` --
    another device) or ``"current"`` (always the current device, as before
    gpured 0.3).

    Returns the mode in force before the call, so that
    ``old = placement("current"); ...; placement(old)`` restores it.
    """
    old = _core.placement()
    if mode is not None:
        _core.placement(mode)
    return old


def rates(device=None):
    """The placement model's rates for a device (default: the current one):
    ``host_call_us``, ``device_call_us`` (the fixed cost of one call),
    ``host_gbs`` and ``device_gbs`` (GB/s per family: reduce, arg, column,
    scan) and ``measured`` (False: the defaults)."""
    r = _core.rates(device)
    t = _core.host_threads()
    r["threads"] = {k: t[k] for k in ("threads", "call_us", "gbs", "measured")}
    return r


def set_rates(device=None, *, host_call_us=None, device_call_us=None,
              host_gbs=None, device_gbs=None, threads_call_us=None,
              threads_gbs=None):
    """Replace some of a device's rates (the others are kept);
    ``threads_call_us`` and ``threads_gbs`` (GB/s per family; 0: the
    default, threads x the host rate / 2) are the host path's on several
    threads, for every device."""
    if threads_call_us is not None or threads_gbs is not None:
        _core.host_threads(call_us=threads_call_us,
                           gbs={k: float(v) for k, v in (threads_gbs or {}).items()})
    cur = _core.rates(device)
    hg = dict(cur["host_gbs"], **(host_gbs or {}))
    dg = dict(cur["device_gbs"], **(device_gbs or {}))
    _core.set_rates(_device_name(device),
                    float(cur["host_call_us"] if host_call_us is None else host_call_us),
                    float(cur["device_call_us"] if device_call_us is None else device_call_us),
                    {k: float(v) for k, v in hg.items()},
                    {k: float(v) for k, v in dg.items()})
    return rates()


def remeasure():
    """Placement's re-measure (issue 39): a large call on a NumPy array (16
    MiB or more) is timed, and where its wall time and the model's estimate
    are more than 4x apart, the side it ran on (the host path or a device)
    is priced by the time it took from then on in this process: a factor
    per side, rate family and size class (16, 64, 256 MiB, 1 GiB and up),
    which fades towards 1 (half-life ``half_life_s``) so that the side is
    tried and timed again.  Within 4x a factor follows the times gently
    (a quarter of the way, in ratio).  A device is only ever found slower
    (its work may end after the call returns: a GPU's result read).

    Returns ``{"on", "half_life_s", "large_bytes", "factors"}``, each
    factor a dict: ``side`` ("host" or a device position), ``family``,
    ``bytes`` (the size class), ``factor`` (now, faded), ``age_s``,
    ``jumps`` (re-measures), ``calls`` (timed), ``why`` (the last
    re-measure's figures).  ``explain()`` shows the factors in its
    ``placement_why`` and ``placement_factor``."""
    return _core.remeasure()


def set_remeasure(on=None, half_life_s=None, reset=False):
    """Switch the re-measure on or off (``GPURED_PLACE_REMEASURE=0`` at
    start), set the factors' half-life in seconds (0: they never fade;
    ``GPURED_PLACE_HALFLIFE_S``, default 120), or forget every factor
    (``reset=True``).  Returns :func:`remeasure`'s dict."""
    return _core.remeasure(on=-1 if on is None else int(bool(on)),
                           half_life_s=-1.0 if half_life_s is None
                           else float(half_life_s), reset=bool(reset))


def _observe(op, a, seconds, **kw):
    """Tests' hook: place ``op(a, **kw)`` as explain() does and say it took
    ``seconds`` (no run): True where that re-measured its side."""
    from ._reduce import explain
    explain(op, a, **kw)
    return _core.place_observe(float(seconds))


def _device_name(device):
    if device is None:
        return _core.get_device()["name"]
    return _core.devices()[_core.device_index(device)]["name"]


def _calls(fn, reps):
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            r = fn()
        if hasattr(r, "get"):
            r.get()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


_FAMILY_CALLS = {
    "reduce": lambda a: (lambda: _core.reduce("sum", a, None, None, None, False,
                                              None, None, None, 0, 0)),
    "arg": lambda a: (lambda: _core.reduce("argmax", a, None, None, None, False,
                                           None, None, None, 0, 0)),
    "column": lambda a: (lambda: _core.reduce("sum", a.reshape(-1, 64), 0, None,
                                              None, False, None, None, None, 0, 0)),
    "scan": lambda a: (lambda: _core.scan("cumsum", a, None, None, None, False,
                                          None, 0, 0)),
}


def measure_rates(sizes=(1 << 10, 1 << 22), reps=None, device=None, save=False):
    """Measure the model's rates on this machine for the current device
    (or ``device``): each family's host path and device call at two sizes
    of float32 (a two-point fit of a call cost and a rate), stored for the
    device (as ``set_rates``) and returned.  ``save=True`` also keeps them
    in the tuning table (``<cache dir>/tuned.json``, as :func:`gpured.tune`
    does), loaded again at every import."""
    if device is not None:
        prev, pinned = _core.current_index(), _core.device_pinned()
        _core.set_device(_core.device_index(device))
        try:
            return measure_rates(sizes, reps, save=save)
        finally:
            _core.set_device(_core.devices()[prev]["index"] if pinned else None)
    if save:
        r = measure_rates(sizes, reps)
        _save_rates(_core.get_device()["name"], r)
        return r
    threads = _core.host_threads()
    if threads["threads"] > 1:
        _measure_threads(threads, reps)
    small, large = sizes
    rng = np.random.default_rng(0)
    data = {n: rng.standard_normal(n).astype(np.float32) for n in sizes}
    fast, slow = 1e6, 1e-6  # rates that force one side
    saved = _core.rates()
    name = _core.get_device()["name"]
    hcall, dcall, hg, dg = [], [], {}, {}
    before = set_host_threads(1)  # the host path on one thread
    try:
        for fam in FAMILIES:
            t = {}
            for side in ("host", "device"):
                h, d = (fast, slow) if side == "host" else (slow, fast)
                _core.set_rates(name, 0.0 if side == "host" else 1e9,
                                1e9 if side == "host" else 0.0,
                                {k: h for k in FAMILIES}, {k: d for k in FAMILIES})
                for n in sizes:
                    fn = _FAMILY_CALLS[fam](data[n])
                    fn()  # warm: kernels built, buffers pooled
                    r = reps or max(3, min(200, (1 << 24) // n))
                    t[side, n] = _calls(fn, r)
            for side, calls, gbs in (("host", hcall, hg), ("device", dcall, dg)):
                dt = max(t[side, large] - t[side, small], 1e-9)
                gbs[fam] = (large - small) * 4 / dt / 1e9
                calls.append(max(0.0, t[side, small] - small * 4 / (gbs[fam] * 1e9)))
    finally:
        set_host_threads(before)
        _core.set_rates(name, saved["host_call_us"], saved["device_call_us"],
                        saved["host_gbs"], saved["device_gbs"])
    _core.set_rates(name, float(np.median(hcall)) * 1e6, float(np.median(dcall)) * 1e6,
                    hg, dg)
    return rates()


# float32 elements: 1 and 16 MiB, the same 16 MiB as the devices' rates
# (measured 4 -> 64 MiB, from DRAM, the threads' rate lost to PoCL's 16
# MiB rate, from the cores' caches, on the H100 host, and 256 MiB - 1 GiB
# sums went to PoCL: 3.03 ms against 2.31-2.35 on the threads)
_THREAD_SIZES = (1 << 18, 1 << 22)


def _measure_threads(saved, reps=None):
    """The host path's rates on its threads (every family, float32 at two
    sizes, a two-point fit as measure_rates), set for every device."""
    small, large = _THREAD_SIZES
    rng = np.random.default_rng(0)
    data = {n: rng.standard_normal(n).astype(np.float32) for n in _THREAD_SIZES}
    name = _core.get_device()["name"]
    r0 = _core.rates()
    gbs = {}
    try:
        # the host path always, on its threads always
        _core.set_rates(name, 0.0, 1e9, {k: 1.0 for k in FAMILIES},
                        {k: 1e-6 for k in FAMILIES})
        _core.host_threads(call_us=0.0, gbs={k: 1e6 for k in FAMILIES})
        for fam in FAMILIES:
            t = {}
            for n in _THREAD_SIZES:
                fn = _FAMILY_CALLS[fam](data[n])
                fn()
                t[n] = _calls(fn, reps or max(3, min(50, (1 << 26) // n)))
            dt = max(t[large] - t[small], 1e-9)
            gbs[fam] = (large - small) * 4 / dt / 1e9
        # the pool's own cost: 64 KiB in 16 tasks, against one thread, in
        # turns (the least of each: a busy CPU elsewhere inflates either)
        fn = _FAMILY_CALLS["reduce"](data[small][:1 << 14])
        t_par = t_one = float("inf")
        for _ in range(3):
            _core.host_threads(threads=saved["threads"], grain=4096)
            fn()
            t_par = min(t_par, _calls(fn, 200))
            _core.host_threads(threads=1)
            t_one = min(t_one, _calls(fn, 200))
        k = min(16, saved["threads"])
        pool = max(0.0, t_par - t_one / k)
    finally:
        _core.host_threads(threads=0 if saved["auto"] else saved["threads"],
                           grain=saved["grain"], call_us=saved["call_us"],
                           gbs=saved["gbs"], measured=saved["measured"])
        _core.set_rates(name, r0["host_call_us"], r0["device_call_us"],
                        r0["host_gbs"], r0["device_gbs"])
    return _core.host_threads(call_us=pool * 1e6, gbs=gbs, measured=True)


def host_threads():
    """The threads a large call on the host path may use (the calling
    thread and a pool of workers kept between calls): ``GPURED_HOST_THREADS``,
    :func:`set_host_threads`, or automatically the CPUs this process may
    run on where they are 4 or more, else 1.  Whether a call uses them is
    the placement model's choice (its ``threads`` rates: see :func:`rates`)."""
    return _core.host_threads()["threads"]


def set_host_threads(n=0):
    """Set the host path's threads (``n=0``: automatic, as at import).
    Returns the setting before (0 where it was automatic), so that
    ``old = set_host_threads(1); ...; set_host_threads(old)`` restores it."""
    before = _core.host_threads()
    _core.host_threads(threads=int(n))
    return 0 if before["auto"] else before["threads"]


def _env_threads():
    """GPURED_HOST_THREADS at import (a bad value is ignored)."""
    v = os.environ.get("GPURED_HOST_THREADS")
    try:
        if v is not None and 0 <= int(v) <= 256:
            _core.host_threads(threads=int(v))
    except ValueError:
        pass


def split_rates():
    """The rate (GB/s, per family: reduce, arg, column, scan) at which two
    devices together read a NumPy array, one share each (a CPU device in
    place and a GPU, say): what the model weighs a split call by.  0 (the
    default, until :func:`measure_split` or :func:`gpured.tune` measures
    it on a machine with two devices): never split."""
    return _core.split_rates()


def set_split_rates(**gbs):
    """Replace some of the split rates (``reduce=``, ``arg=``, GB/s; 0
    turns splitting off for that family)."""
    return _core.split_rates({k: float(v) for k, v in gbs.items()})


def measure_split(sizes=(1 << 24, 1 << 28), reps=None, save=False):
    """Measure the split rates: sums and argmax of float32 NumPy arrays of
    two sizes (bytes) split between the two devices the model would pair
    (a two-point fit: bytes over the difference of the times), stored
    (:func:`split_rates`) and returned; 0 for a family whose split at the
    larger size was not faster than its call placed as now (one place),
    so it never splits.  ``save=True`` keeps them in the tuning table.
    None where there is one device, or placement is pinned to one."""
    from . import _split
    if len(_core.devices()) < 2 or _core.placement() != "auto" or \
            _core.device_pinned():
        return None
    saved = _core.split_rates()
    rng = np.random.default_rng(0)
    data = {n: rng.standard_normal(n // 4).astype(np.float32) for n in sizes}
    got = {}
    small, large = sizes
    try:
        for fam, op in (("reduce", "sum"), ("arg", "argmax")):
            t = {}
            # one place, as the model places it now: a split must beat it
            _core.split_rates({fam: 0.0})
            one = _calls(lambda op=op: _core.reduce(
                op, data[large], None, None, None, False, np._NoValue, {}),
                reps or max(3, min(50, (1 << 26) // large)))
            _core.split_rates({fam: 1e6})  # a pair, always
            for n in sizes:
                a = data[n]

                def fn(a=a, op=op):
                    return _split.reduce(op, a, None, False, force=True)
                if fn() is None:
                    return None
                t[n] = _calls(fn, reps or max(3, min(50, (1 << 26) // n)))
            got[fam] = (large - small) / max(t[large] - t[small], 1e-9) / 1e9
            if t[large] >= 0.95 * one:
                got[fam] = 0.0  # measured no faster: never split
    finally:
        _core.split_rates(saved)
    r = _core.split_rates(got)
    if save:
        table = _read()
        table["_split"] = dict(r)
        _write(table)
    return r


def load_split(saved):
    """Set the split rates kept in the table (its ``"_split"`` entry); a
    damaged entry is ignored."""
    try:
        gbs = {k: float(v) for k, v in saved.items()}
        if all(v >= 0 for v in gbs.values()):
            _core.split_rates(gbs)
            return True
    except (AttributeError, TypeError, ValueError):
        pass
    return False


def _save_rates(device_name, r):
    """Keep a device's measured rates in the tuning table (and the host
    path's on its threads, where measured)."""
    table = _read()
    t = r.get("threads")
    if t and t.get("measured"):
        table["_threads"] = {"call_us": t["call_us"], "gbs": dict(t["gbs"])}
    saved = table.get("_rates")
    saved = saved if isinstance(saved, dict) else {}
    saved[device_name] = {k: r[k] for k in ("host_call_us", "device_call_us",
                                            "host_gbs", "device_gbs")}
    table["_rates"] = saved
    _write(table)


def load_threads(saved):
    """Set the host path's thread rates kept in the table (its
    ``"_threads"`` entry); a damaged entry is ignored."""
    try:
        gbs = {k: float(v) for k, v in saved["gbs"].items() if k in FAMILIES}
        call = float(saved["call_us"])
        if call >= 0 and all(v >= 0 for v in gbs.values()):
            _core.host_threads(call_us=call, gbs=gbs, measured=True)
            return True
    except (KeyError, TypeError, ValueError, AttributeError):
        pass
    return False


def load_rates(saved):
    """Set the rates kept in the table (its ``"_rates"`` entry); returns
    how many devices'.  A damaged entry is ignored, never trusted."""
    n = 0
    for name, r in saved.items() if isinstance(saved, dict) else ():
        try:
            hg = {k: float(v) for k, v in r["host_gbs"].items()}
            dg = {k: float(v) for k, v in r["device_gbs"].items()}
            if not all(v > 0 for v in list(hg.values()) + list(dg.values())):
                continue
            _core.set_rates(str(name), float(r["host_call_us"]),
                            float(r["device_call_us"]), hg, dg)
            n += 1
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return n
