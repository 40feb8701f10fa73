"""The parent side shared by tests/oclgrind_*.py: run each job of a check
in its own process under Oclgrind and fail on any report.

    python3 tests/oclgrind_<family>.py                # parent: runs the jobs
    python3 tests/oclgrind_<family>.py --child JOB    # what runs in oclgrind

A job is a JSON dict whose "kind" is "races" (Oclgrind's data-race,
barrier-divergence and memory-access checks, --data-races) or anything
else (the uninitialised-value check, one thread: see the notes in
tests/oclgrind_check.py).  Kernels build with -cl-opt-disable: Oclgrind's
interpreter does not know LLVM's `freeze`, which the optimiser emits.
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def run_job(script, job, tmp, i, cache_per_job):
    log = os.path.join(tmp, "oclgrind-%d.log" % i)
    cache = "cache-%d" % i if cache_per_job else "cache-%s" % job["kind"]
    env = dict(os.environ, GPURED_CACHE_DIR=os.path.join(tmp, cache),
               GPURED_DEVICE="oclgrind")
    checks = (["--data-races"] if job["kind"] in ("races", "nan", "var") else
              ["--uninitialized", "--num-threads", "1"])
    cmd = (["oclgrind", "--log", log, "--check-api", "--build-options",
            "-cl-opt-disable"] + checks +
           [sys.executable, os.path.abspath(script), "--child", json.dumps(job)])
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    report = open(log).read() if os.path.exists(log) else ""
    return job, proc.returncode, proc.stdout, report


def parent(script, todo, label, cache_per_job=False):
    if shutil.which("oclgrind") is None:
        print("oclgrind is not installed (Debian package 'oclgrind')")
        return 1
    tmp = tempfile.mkdtemp(prefix="gpured-oclgrind-")
    t0 = time.time()
    failed = 0
    workers = max(1, min(4, os.cpu_count() or 1))
    try:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for job, rc, out, report in pool.map(
                    lambda ij: run_job(script, ij[1], tmp, ij[0], cache_per_job),
                    enumerate(todo)):
                if rc != 0 or report.strip():
                    failed += 1
                    print("FAILED %s (exit %d)\n%s\n%s" % (json.dumps(job), rc,
                                                           out[-4000:], report[:8000]))
                elif out.strip():
                    print(out.rstrip())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("oclgrind %s: %d jobs (%d with reports or failures) in %.0f s"
          % (label, len(todo), failed, time.time() - t0))
    return 1 if failed else 0


def main(script, child, jobs, label, cache_per_job=False):
    """The entry point of an oclgrind_*.py script."""
    if "--child" in sys.argv:
        sys.exit(child(json.loads(sys.argv[sys.argv.index("--child") + 1])))
    sys.exit(parent(script, jobs(), label, cache_per_job))
