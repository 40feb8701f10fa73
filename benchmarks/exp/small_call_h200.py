"""Issue 43's small calls: a 1 KiB device-resident reduction per call,
gpured's face against the C core alone and against torch and CuPy in the
same process (loops of 2000 calls, one synchronise, median of 7 loops;
the rows taken in turns, three rounds, the best round's median kept, so
that a slow spell of the host hits every row alike).

  face        gpured.sum(d) etc. as a user calls it
  face, steps the same with gpured._reduce._plain off: the Python steps
              a real device array without a mask now skips (complex
              pairing, mask conversion, the host split's test)
  core        gpured._core.reduce(...) called directly: the floor the
              Python face sits on

    bash benchmarks/gpu_run.sh exp benchmarks/exp/small_call_h200.py
On the 2-core machine (PoCL) it runs as well; its absolute times are the
CPU device's.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gpured  # noqa: E402
from gpured import _core, _reduce  # noqa: E402
from _loop import loop_ms, optional_cupy, optional_torch  # noqa: E402

torch, cp = optional_torch(), optional_cupy()
CALLS = int(os.environ.get("SMALL_CALLS", "2000"))
NV = np._NoValue
f32 = gpured.to_device(np.ones(256, np.float32))
i32 = gpured.to_device(np.arange(256, dtype=np.int32))
plain = _reduce._plain


def steps_on(fn):
    def run():
        _reduce._plain = lambda a, where=True: False
        try:
            return loop_ms(fn, gpured.synchronize, calls=CALLS, loops=7)
        finally:
            _reduce._plain = plain
    return run


CASES = [("sum f32", gpured.sum, f32, "sum"), ("max i32", gpured.max, i32, "max"),
         ("argmax f32", gpured.argmax, f32, "argmax"), ("mean f32", gpured.mean, f32, "mean")]
for name, fn, d, op in CASES:  # every path answers as NumPy does
    h = d.get()
    want = getattr(np, op)(h)
    got = (fn(d), _core.reduce(op, d, None, None, None, False, NV, {}))
    assert all(np.asarray(g).item() == want for g in got), (name, got, want)
timers = {}
for name, fn, d, op in CASES:
    t = {"face": lambda fn=fn, d=d: loop_ms(lambda: fn(d), gpured.synchronize,
                                            calls=CALLS, loops=7),
         "face, steps": steps_on(lambda fn=fn, d=d: fn(d)),
         "core": lambda d=d, op=op: loop_ms(
             lambda: _core.reduce(op, d, None, None, None, False, NV, {}),
             gpured.synchronize, calls=CALLS, loops=7)}
    if torch is not None and torch.cuda.is_available():
        x = torch.from_numpy(d.get()).cuda()
        tf = getattr(torch, op)
        t["torch"] = lambda x=x, tf=tf: loop_ms(lambda: tf(x), torch.cuda.synchronize,
                                                 calls=CALLS, loops=7)
    if cp is not None:
        c = cp.asarray(d.get())
        cf = getattr(cp, op)
        t["cupy"] = lambda c=c, cf=cf: loop_ms(lambda: cf(c), cp.cuda.Device().synchronize,
                                               calls=CALLS, loops=7)
    timers[name] = t
best = {}
for _ in range(3):
    for name, t in timers.items():
        for k, run in t.items():
            us = run() * 1e3
            best[name, k] = min(best.get((name, k), us), us)
cols = ["face", "face, steps", "core", "torch", "cupy"]
print("\n| 1 KiB device array, us a call | " + " | ".join(cols) +
      " | best peer / face |")
print("|---|" + "---:|" * (len(cols) + 1))
for name in timers:
    vals = [best.get((name, k)) for k in cols]
    peers = [v for k, v in zip(cols, vals) if k in ("torch", "cupy") and v]
    print("| %s | %s | %s |" % (name, " | ".join(
        "%.2f" % v if v else "-" for v in vals),
        "%.2f" % (min(peers) / vals[0]) if peers else "-"))
