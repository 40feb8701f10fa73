"""Two-GPU host probe (issue 43): which OpenCL devices a plain process, a
subprocess, a spawned multiprocessing child and a dask.distributed worker
see, with the OpenCL/CUDA environment of each; then local_cluster's sum.
Run: bash benchmarks/gpu_run.sh exp benchmarks/exp/x2_probe.py (x2 kind)."""
import multiprocessing as mp
import os
import subprocess
import sys
import traceback

import numpy as np


def view():
    import gpured
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("OCL", "CUDA", "GPURED", "NVIDIA"))}
    try:
        devs = [(d["index"], d["name"]) for d in gpured.devices()]
    except Exception as e:  # noqa: BLE001
        devs = repr(e)
    return {"pid": os.getpid(), "env": env, "devices": devs}


def child(q):
    q.put(view())


if __name__ == "__main__":
    print("main", view(), flush=True)
    out = subprocess.run([sys.executable, "-c",
                          "import sys; sys.path[:0] = ['.', 'benchmarks/exp']; "
                          "from x2_probe import view; print(view())"],
                         capture_output=True, text=True)
    print("subprocess", out.stdout.strip(), out.stderr[-500:], flush=True)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    print("spawn", q.get(timeout=60), flush=True)
    p.join()
    try:
        import dask.array as da
        from distributed import Client
        import gpured.dask as gd
        with gd.local_cluster(threads_per_worker=2, silence_logs=40) as cl, \
                Client(cl) as c:
            print("workers", c.run(view), flush=True)
            a = np.arange(1 << 22, dtype=np.float32)
            x = da.from_array(a, chunks=1 << 20)
            print("sum", gd.sum(x).compute(), a.sum(dtype=np.float64), flush=True)
    except Exception:  # noqa: BLE001
        traceback.print_exc()
