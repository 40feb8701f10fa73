"""Why a 16 MiB NumPy sum on the host path's threads swings between runs
(issue 12: 0.047-0.09 ms in some runs, 0.27-0.68 in others, same code).

gpured.sum of a float32 NumPy array forced onto every thread (the model's
rates set so), timed after each of the things host_threads.py does before
it: nothing, measure_rates of each device, torch's CPU sum, a call on the
CPU device.  Each row: median of 5 loops of calls (ms), the pool's counts
over the loops (share of tasks the caller ran, workers woken from sleep
per job, workers closed out per job), and the process's threads that
used CPU while it slept 0.2 s (something spinning beside the pool).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/pool_swing.py [MiB]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _loop import loop_ms, optional_torch  # noqa: E402

import gpured  # noqa: E402
from gpured import _core  # noqa: E402

torch = optional_torch()
F = ("reduce", "arg", "column", "scan")


def cpu_ticks():
    out = {}
    for t in os.listdir("/proc/self/task"):
        try:
            st = open("/proc/self/task/%s/stat" % t).read()
            name = open("/proc/self/task/%s/comm" % t).read().strip()
        except OSError:
            continue
        f = st[st.rfind(")") + 2:].split()
        out[t] = (name, int(f[11]) + int(f[12]))
    return out


def spinners(idle=0.2):
    a = cpu_ticks()
    time.sleep(idle)
    b = cpu_ticks()
    busy = {}
    for t, (name, v) in b.items():
        d = v - a.get(t, (name, v))[1]
        if d > 0:
            busy[name] = busy.get(name, 0) + d
    return "%d threads; busy while idle (ticks/%.1fs): %s" % (
        len(b), idle, busy or "none")


def force_threads():
    gpured.set_device(gpured.get_device()["position"])  # pinned: no roaming
    name = gpured.get_device()["name"]
    _core.set_rates(name, 0.0, 1e9, {k: 1.0 for k in F}, {k: 1e-6 for k in F})
    _core.host_threads(call_us=0.0, gbs={k: 1e6 for k in F}, grain=0)


def row(label, a, calls):
    c0 = _core.host_threads()["counts"]
    ts = [loop_ms(lambda: gpured.sum(a), lambda: None, calls, 1) for _ in range(5)]
    c1 = _core.host_threads()["counts"]
    jobs = max(1, c1["jobs"] - c0["jobs"])
    assert c1["jobs"] > c0["jobs"], "the pool did not run: the sum went elsewhere"
    tasks = max(1, c1["tasks"] - c0["tasks"])
    print("%-34s median %.4f ms  loops %s | caller ran %.0f%% of tasks, woken/job %.2f, "
          "closed/job %.2f" % (label, sorted(ts)[2], " ".join("%.3f" % t for t in ts),
                               100.0 * (c1["caller_tasks"] - c0["caller_tasks"]) / tasks,
                               (c1["woken"] - c0["woken"]) / jobs,
                               (c1["closed"] - c0["closed"]) / jobs), flush=True)


def main():
    mib = float(sys.argv[1]) if len(sys.argv) > 1 else 16
    nb = int(mib * (1 << 20))
    calls = max(5, min(2000, (1 << 27) // nb))
    devs = gpured.devices()
    print("spin_us", os.environ.get("GPURED_HOST_SPIN_US"), "devices",
          [d["name"][:24] for d in devs], "threads", gpured.host_threads(),
          "torch threads", torch.get_num_threads() if torch else None)
    a = np.random.default_rng(0).standard_normal(nb // 4).astype(np.float32)
    force_threads()
    print("start:", spinners())
    row("fresh", a, calls)
    row("fresh, again", a, calls)
    for d in devs:
        gpured.measure_rates(device=d["position"])
        force_threads()
        print("after measure_rates %s: %s" % (d["name"][:20], spinners()))
        row("after measure_rates " + d["name"][:12], a, calls)
    if torch is not None:
        t = torch.from_numpy(a)
        loop_ms(lambda: t.sum(), lambda: None, calls)
        print("after torch:", spinners(0.05))
        row("right after torch sum", a, calls)
        loop_ms(lambda: t.sum(), lambda: None, calls)
        time.sleep(0.3)
        row("torch sum, 0.3 s, then", a, calls)
    for d in devs:
        if d["type"] == "CPU":
            home = gpured.get_device()["position"]
            gpured.set_device(d["position"])
            gpured.placement("current")
            loop_ms(lambda: gpured.sum(a), lambda: None, calls)
            gpured.placement("auto")
            gpured.set_device(None)
            force_threads()
            print("after CPU device:", spinners(0.05))
            row("right after the CPU device", a, calls)
    row("last", a, calls)
    if torch is not None:
        print("torch sum %.4f ms, numpy %.4f ms" % (
            loop_ms(lambda: t.sum(), lambda: None, calls),
            loop_ms(lambda: np.sum(a), lambda: None, calls)))
    print("end:", spinners())


if __name__ == "__main__":
    main()
