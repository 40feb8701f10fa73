"""Issue 12's split: one gpured.sum / argmax of a NumPy array read by two
devices at once (the CPU device in place and a GPU), against each device
alone, NumPy and torch's CPU kernels, one process.  Measures the split
rates first (gpured.measure_split), then times loops of calls (median).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/split_host.py [GiB]
    (locally: POCL_DEVICES="pthread pthread" PYTHONPATH=. python3 ... 0.0625)
"""
import os
import sys

import numpy as np

import gpured

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

gib = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
n = int(gib * (1 << 30)) // 4
a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
devs = gpured.devices()
print("%g GiB float32; devices: %s" % (gib, ", ".join(
    "%d %s (%s)" % (i, d["name"][:28], d["type"]) for i, d in enumerate(devs))),
    flush=True)
nothing = lambda: None  # noqa: E731 (host results: nothing to wait for)
rows = []


def row(name, fn, calls=5):
    ms = loop_ms(fn, nothing, calls)
    rows.append((name, ms))
    print("  %-44s %9.3f ms  %6.1f GB/s" % (name, ms, a.nbytes / ms / 1e6),
          flush=True)


row("numpy.sum", lambda: np.sum(a))
try:
    import torch
    torch.set_num_threads(os.cpu_count())
    t = torch.from_numpy(a)
    row("torch CPU sum (%d threads)" % torch.get_num_threads(), lambda: t.sum())
    row("torch CPU argmax", lambda: t.argmax())
except ImportError:
    pass
gpured.set_split_rates(reduce=0, arg=0)
e = gpured.explain("sum", a)
row("gpured.sum, one place (%s %s)" % (e["placement"], e.get("device")),
    lambda: gpured.sum(a))
for i, d in enumerate(devs):
    row("gpured.sum device=%d (%s)" % (i, d["type"]),
        lambda i=i: gpured.sum(a, device=i))
for i, d in enumerate(devs):
    row("gpured.argmax device=%d (%s)" % (i, d["type"]),
        lambda i=i: gpured.argmax(a, device=i))
from gpured import _split  # noqa: E402
gpured.set_split_rates(reduce=1e6, arg=1e6)
for op in ("sum", "argmax"):
    sp = _split.plan(op, a.nbytes)
    row("%s split %.3f / %.3f, forced" % (op, sp[2], 1 - sp[2]),
        lambda op=op: _split.reduce(op, a, None, False, force=True))
m = gpured.measure_split(sizes=(n * 4 // 16, n * 4))
print("  split rates measured: %s" % m, flush=True)
for op in ("sum", "argmax"):
    e = gpured.explain(op, a)
    print("  %s: %s %s" % (op, e["placement"], e["placement_why"]), flush=True)
    row("gpured.%s, auto (%s)" % (op, e["placement"]),
        lambda op=op: getattr(gpured, op)(a))
assert gpured.argmax(a) == np.argmax(a)
assert abs(float(gpured.sum(a)) - float(np.sum(a, dtype=np.float64))) <= \
    1e-5 * float(np.abs(a).sum())
base = dict(rows).get("torch CPU sum (%d threads)" % os.cpu_count())
print("\n| case | ms | GB/s | x torch CPU sum |\n|---|---:|---:|---:|")
for name, ms in rows:
    print("| %s | %.3f | %.1f | %s |" % (name, ms, a.nbytes / ms / 1e6,
                                         "%.2f" % (base / ms) if base else "-"))
