"""gpured: parallel reductions on any OpenCL device, NumPy arrays in and out.

    >>> import numpy as np, gpured
    >>> a = np.arange(10, dtype=np.float32)
    >>> gpured.sum(a)
    np.float32(45.0)

Every function follows NumPy's signature and semantics (result dtypes,
integer wraparound, NaN propagation, empty reductions, ``axis``/``keepdims``/
``dtype``/``out``/``initial``).  The work runs on the current OpenCL device:
the first GPU, else the first CPU device (PoCL); ``GPURED_DEVICE`` or
:func:`set_device` choose another.

Extra keyword arguments pick the algorithm: ``variant=`` (see
:func:`variants`) and the knobs ``wg_size``, ``groups``, ``items``, ``ilp``
and ``vw``; :func:`explain` shows what would run and why.
"""
from . import _loader
_loader.setup()  # the OpenCL loader and wheels' runtimes, before _core loads
from . import _core  # noqa: E402
from ._version import __version__  # noqa: E402
from ._reduce import (all, any, argmax, argmin, explain, max, mean, min,
                      prod, sum, timeit, variants)

from ._array import (Array, asnumpy, empty, set_staging, staging,
                     synchronize, to_device, zeros)
from ._bykey import (explain_by_key, reduce_by_key, scan_by_key, sum_by_key,
                     timeit_by_key, variants_by_key)
from ._tune import tune
from . import _tune
from ._scan import cummax, cummin, cumprod, cumsum, with_scans
variants, explain, timeit = with_scans(variants, explain, timeit)

OpenCLError = _core.OpenCLError
VariantUnavailable = _core.VariantUnavailable

__all__ = [
    "sum", "prod", "min", "max", "all", "any", "mean", "argmin", "argmax",
    "devices", "get_device", "set_device", "kernel_source", "variants",
    "explain", "timeit", "tune", "OpenCLError", "VariantUnavailable",
    "reduce_by_key", "sum_by_key", "scan_by_key", "variants_by_key",
    "explain_by_key", "timeit_by_key",
    "Array", "to_device", "asnumpy", "empty", "zeros", "synchronize",
    "set_staging", "staging",
]
__all__ += ["cumsum", "cumprod", "cummin", "cummax"]


def devices():
    """List the OpenCL devices with the capabilities that decide variants.

    Each entry is a dict: name, platform, type ("GPU"/"CPU"/...), index
    ("platform:device"), compute_units, max_work_group_size, local_mem_size,
    fp64, atomics64, subgroups, wg_collectives, nvidia_ptx, versions.
    """
    return _core.devices()


def get_device():
    """The current device, as one entry of :func:`devices`."""
    return _core.get_device()


def set_device(spec):
    """Make another device current.

    ``spec`` is ``"platform:device"`` (indices, as in ``devices()[i]["index"]``)
    or a case-insensitive part of the device or platform name.  Returns the
    device's dict; ValueError if nothing matches.
    """
    if isinstance(spec, int):
        spec = devices()[spec]["index"]
    return _core.set_device(str(spec))


def kernel_source(family="reduce"):
    """The OpenCL C source of a kernel family (building blocks included)."""
    return _core.kernel_source(family)


def cache_dir():
    """Directory of the compiled-kernel cache (``GPURED_CACHE_DIR``)."""
    return _core.cache_dir()


_tune.load()  # gpured.tune()'s winners, if this device was tuned
