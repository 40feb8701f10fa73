"""Some pytest files / selections on the GPU in one exp call (the whole
suite is `gpu_run.sh tests`): PYTEST_ARGS holds pytest's arguments.
    PYTEST_ARGS="tests/test_kernels.py -k by_key" bash benchmarks/gpu_run.sh exp benchmarks/exp/pytest_some.py"""
import os
import shlex
import subprocess
import sys

args = shlex.split(os.environ.get("PYTEST_ARGS", "tests"))
sys.exit(subprocess.call([sys.executable, "-m", "pytest", "-q", "-x", "-p",
                          "no:cacheprovider"] + args))
