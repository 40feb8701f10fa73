"""gpured: parallel reductions on any OpenCL device, NumPy arrays in and out.

    >>> import numpy as np, gpured
    >>> a = np.arange(10, dtype=np.float32)
    >>> gpured.sum(a)
    np.float32(45.0)

Every function follows NumPy's signature and semantics (result dtypes,
integer wraparound, NaN propagation, empty reductions, ``axis``/``keepdims``/
``dtype``/``out``/``initial``).  The work runs on the current OpenCL device:
the first GPU, else the first CPU device (PoCL); ``GPURED_DEVICE`` or
:func:`set_device` choose another, and ``device=`` picks one per call.

Extra keyword arguments pick the algorithm: ``variant=`` (see
:func:`variants`) and the knobs ``wg_size``, ``groups``, ``items``, ``ilp``
and ``vw``; :func:`explain` shows what would run and why.
"""
import sys

from . import _loader
_loader.setup()  # the OpenCL loader and wheels' runtimes, before _core loads
try:
    from . import _core  # noqa: E402
except ImportError as _e:  # an unbuilt checkout: "cannot import name '_core'"
    if "_core" not in str(_e):
        raise
    import os as _os
    raise ImportError(
        "gpured: the C extension gpured._core is not built (%s is a source "
        "checkout without it). Build it in the checkout: `make build` (or "
        "`pip install -e .`), or install gpured: `pip install .` (then import "
        "it from outside the checkout). [%s]"
        % (_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), _e)) from None
from ._version import __version__  # noqa: E402
from ._reduce import (all, any, argmax, argmin, count_nonzero, explain, max, mean, min,
                      nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod, nansum,
                      nanstd, nanvar, prod, ptp, reduceat, std, sum, timeit, var, average,
                      variants)
from ._reduce import _nancount  # noqa: E402,F401  (gpured.dask's nanmean)
from ._reduce import _nanarg_index  # noqa: E402,F401  (gpured.dask's nanarg*)
from ._array import (Array, asnumpy, empty, empty_cache, from_dlpack,
                     handles, memory_info, set_memory_limit, set_staging,
                     staging, synchronize, to_device, use_queue, zeros)
from ._bykey import (explain_by_key, reduce_by_key, scan_by_key, sum_by_key,
                     timeit_by_key, variants_by_key)
from ._bins import bincount, explain_bins, histogram, unique
from ._tune import tune
from ._elementwise import where
from ._aggregate import aggregate, explain_aggregate
from ._kernels import ReductionKernel, ScanKernel, dot, logsumexp, vdot
from . import _tune
from ._scan import (cummax, cummin, cumprod, cumsum, cumulative_prod,
                    cumulative_sum, nancumprod, nancumsum)
from ._place import (host_threads, measure_rates, measure_split, placement,
                     rates, remeasure, set_host_threads, set_rates,
                     set_remeasure, set_split_rates, split_rates)

from . import _half  # noqa: E402
_half.wrap_all(globals(), _half._KINDS)  # float16/bfloat16 via float32
explain, timeit = _half.wrap_explain(explain), _half.wrap_explain(timeit)
from . import _elementwise  # noqa: E402
_elementwise.bind_family(sys.modules[__name__])  # ufunc.reduce -> gpured.sum ...

OpenCLError = _core.OpenCLError
VariantUnavailable = _core.VariantUnavailable

__all__ = [
    "sum", "prod", "min", "max", "all", "any", "mean", "argmin", "argmax",
    "cumsum", "cumprod", "cummin", "cummax", "cumulative_sum", "cumulative_prod",
    "nansum", "nanprod", "nanmin", "nanmax", "nanargmin", "nanargmax", "nanmean", "count_nonzero",
    "ptp", "var", "std", "nanvar", "nanstd", "reduceat", "average",
    "nancumsum", "nancumprod",
    "reduce_by_key", "sum_by_key", "scan_by_key", "variants_by_key",
    "explain_by_key", "timeit_by_key", "bincount", "histogram",
    "explain_bins", "unique",
    "devices", "get_device", "set_device", "kernel_source", "variants",
    "explain", "timeit", "tune", "OpenCLError", "VariantUnavailable",
    "Array", "to_device", "asnumpy", "empty", "zeros", "synchronize",
    "set_staging", "staging", "memory_info", "empty_cache",
    "set_memory_limit", "from_dlpack", "use_queue", "handles",
    "placement", "rates", "set_rates", "measure_rates", "remeasure",
    "set_remeasure",
    "split_rates", "set_split_rates", "measure_split",
    "host_threads", "set_host_threads", "where",
    "aggregate", "explain_aggregate",
    "ReductionKernel", "ScanKernel", "dot", "vdot", "logsumexp",
]


def devices():
    """List the OpenCL devices with the capabilities that decide variants.

    Each entry is a dict: name, platform, type ("GPU"/"CPU"/...), index
    ("platform:device"), position (in this list), compute_units,
    max_work_group_size, local_mem_size, fp64, atomics64, subgroups,
    wg_collectives, nvidia_ptx, versions.
    """
    return _core.devices()


def get_device():
    """The current device, as one entry of :func:`devices`."""
    return _core.get_device()


def set_device(spec=None, queue=None):
    """Make another device current.

    ``spec`` is ``"platform:device"`` (indices, as in ``devices()[i]["index"]``),
    a case-insensitive part of the device or platform name, or a position in
    :func:`devices`.  ``queue`` (a ``pyopencl.CommandQueue``) makes its
    device current and runs gpured on its context and queue
    (:func:`use_queue`).  Returns the device's dict; ValueError if nothing
    matches.

    A device chosen here (or by ``GPURED_DEVICE``) is pinned: calls on
    NumPy arrays run on it or on the host path, never on another device.
    ``set_device(None)`` makes the default device (the first GPU) current
    again, unpinned: placement "auto" may then run a NumPy call on
    whichever device its model says finishes first (:func:`placement`).
    """
    if spec is None and queue is None:
        return _core.set_device(None)
    if queue is not None:
        spec = use_queue(queue) if spec is None else spec
        if spec != _core.device_index(spec):
            use_queue(queue)
    return _core.set_device(spec)


def kernel_source(family="reduce"):
    """The OpenCL C source of a kernel family (building blocks included)."""
    return _core.kernel_source(family)


def cache_dir():
    """Directory of the compiled-kernel cache (``GPURED_CACHE_DIR``)."""
    return _core.cache_dir()


_tune.load()  # gpured.tune()'s winners, if this device was tuned
from . import _place  # noqa: E402
_place._env_threads()  # GPURED_HOST_THREADS
