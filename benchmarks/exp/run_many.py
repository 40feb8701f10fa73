"""Run several experiment scripts in one device call, each under its own
time limit, their output one after another (a machine keeps nothing
between calls, and each call pays the set-up).

    bash benchmarks/gpu_run.sh exp benchmarks/exp/run_many.py [-t S] A.py B.py ...
    (-t: seconds per script, 90 unless given; ENV=value pairs before a
     script's name go into its environment: N=1 x.py)
"""
import os
import subprocess
import sys
import time

args = sys.argv[1:]
limit = 90.0
if args[:1] == ["-t"]:
    limit, args = float(args[1]), args[2:]
env = {}
for a in args:
    if "=" in a and not a.endswith(".py"):
        k, v = a.split("=", 1)
        env[k] = v
        continue
    print("=" * 20, a, " ".join("%s=%s" % kv for kv in env.items()), flush=True)
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, a], env={**os.environ, **env}, timeout=limit,
                           stdout=sys.stdout, stderr=subprocess.STDOUT)
        rc = r.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    print("=" * 20, a, "rc", rc, "%.0f s" % (time.time() - t0), flush=True)
    env = {}
