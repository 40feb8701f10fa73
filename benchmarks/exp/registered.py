"""NumPy arrays read in place by the GPU: registered host memory (issue 12).

A 1 GiB float32 NumPy array, gpured pinned to the GPU: the first calls go
through the staging pool; from the third on the array's memory is
registered (set_staging(register="auto")) and copied straight from.  Wall
clock per call (NumPy in, answer out), median of loops, beside CuPy on
memory registered with cudaHostRegister (the issue's 25.8 ms), torch's CPU
sum, and gpured with register="never".

    bash benchmarks/gpu_run.sh exp benchmarks/exp/registered.py [MIB]
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms  # noqa: E402

import gpured  # noqa: E402


def gpu_mem_mib():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout
        return int(out.split()[0])
    except Exception:  # noqa: BLE001 - diagnosis only
        return -1


def ms(t0):
    return (time.perf_counter() - t0) * 1e3


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    gpu = [i for i, d in enumerate(gpured.devices()) if d["type"] == "GPU"][0]
    gpured.set_device(gpu)
    gpured.placement("current")
    a = np.random.default_rng(0).random(mib << 18, dtype=np.float32)
    want = float(a.sum(dtype=np.float64))
    rows = []

    def ok(x):
        return abs(float(x) - want) <= 1e-5 * abs(want)

    gpured.set_staging(register="never")
    gpured.sum(a)
    never = loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)
    rows.append(("sum, register never (staging pool)", never))
    gpured.set_staging(register="auto")
    m0 = gpu_mem_mib()
    for k in range(4):
        t0 = time.perf_counter(); r = gpured.sum(a); t = ms(t0)
        st = gpured.staging()
        print("call %d: %.2f ms ok %s registered %d direct %d" % (
            k + 1, t, ok(r), st["registered"], st["direct_chunks"]), flush=True)
    print("GPU memory used: before registering %d MiB, after %d MiB" % (m0, gpu_mem_mib()))
    reg = loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)
    rows.append(("sum, registered", reg))
    print("registered sum ok", ok(gpured.sum(a)))
    a[123] += 1000.0
    want += 1000.0
    print("host write seen:", ok(gpured.sum(a)))
    rows.append(("mean, registered", loop_ms(lambda: gpured.mean(a), lambda: None, 5, 5)))
    rows.append(("max, registered", loop_ms(lambda: gpured.max(a), lambda: None, 5, 5)))
    rows.append(("to_device, registered",
                 loop_ms(lambda: gpured.to_device(a), gpured.synchronize, 5, 5)))
    c = gpured.cumsum(a[:4096])
    np.testing.assert_allclose(c, np.cumsum(a[:4096], dtype=np.float64), rtol=1e-5)
    rows.append(("cumsum, registered input", loop_ms(lambda: gpured.cumsum(a),
                                                     lambda: None, 2, 3)))
    gpured.set_staging(register="never")
    rows.append(("cumsum, register never", loop_ms(lambda: gpured.cumsum(a),
                                                   lambda: None, 2, 3)))
    gpured.set_staging(register="auto")
    for k in range(3):
        gpured.sum(a)
    b = a.copy()
    t0 = time.perf_counter()
    del a
    rows.append(("del of a registered 1 GiB array (unregisters)", ms(t0)))
    a = b
    try:
        import cupy as cp
        cp.cuda.runtime.hostRegister(a.ctypes.data, a.nbytes, 0)

        def cupy_sum():
            return float(cp.asarray(a).sum())
        rows.append(("CuPy: asarray(registered).sum()", loop_ms(cupy_sum, lambda: None, 5, 5)))
        cp.cuda.runtime.hostUnregister(a.ctypes.data)
        rows.append(("CuPy: asarray(pageable).sum()", loop_ms(cupy_sum, lambda: None, 3, 3)))
    except Exception as e:  # noqa: BLE001
        print("cupy:", e)
    try:
        import torch
        t = torch.from_numpy(a)
        rows.append(("torch CPU sum", loop_ms(lambda: float(torch.sum(t)), lambda: None, 5, 5)))
    except ImportError:
        pass
    gpured.set_device(None)
    gpured.placement("auto")
    e = gpured.explain("sum", a)
    rows.append(("gpured auto placement (%s)" % e.get("device"),
                 loop_ms(lambda: gpured.sum(a), lambda: None, 5, 5)))
    print()
    print("| case (%d MiB float32 NumPy) | ms per call |" % mib)
    print("|---|---|")
    for name, t in rows:
        print("| %s | %.2f |" % (name, t))


if __name__ == "__main__":
    main()
