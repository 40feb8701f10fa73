"""gpured's PEP 517 build backend: setuptools', plus the OpenCL headers and
loader from PyPI (the ``nvidia-cuda-opencl`` wheel) as a build requirement
only where the machine has none of its own (see gpured_opencl.py).

pyproject.toml names it with ``backend-path = ["_build_backend"]``; every hook
not defined here is setuptools.build_meta's.
"""
import os
import sys

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403  (the other hooks, unchanged)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpured_opencl  # noqa: E402


def _opencl_requires():
    if gpured_opencl.needs_wheel():
        print("gpured: no system OpenCL headers/loader for the build: adding %s "
              "to the build requirements" % gpured_opencl.WHEEL, file=sys.stderr)
        return [gpured_opencl.WHEEL]
    return []


def get_requires_for_build_wheel(config_settings=None):
    return _orig.get_requires_for_build_wheel(config_settings) + _opencl_requires()


def get_requires_for_build_editable(config_settings=None):
    return _orig.get_requires_for_build_editable(config_settings) + _opencl_requires()
