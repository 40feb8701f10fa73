"""An array API namespace whose statistical and utility functions are
gpured's: the data-apis/array-api-tests suite runs against it
(``make test-array-api``; ARRAY_API_TESTS_MODULE=xp_gpured).

Everything is ``array_api_compat.numpy`` (NumPy 2 made array-API
compatible), except the functions gpured implements, which are replaced
by wrappers calling gpured's function on the NumPy array (gpured's host
array path: the kernels on the current OpenCL device, PoCL in CI) and
returning a NumPy array.  The suite's other functions (creation,
indexing, ``diff``, ...) stay NumPy's and are not what is tested here.
"""
import numpy as np
import array_api_compat.numpy as _base

import gpured

__array_api_version__ = _base.__array_api_version__

# the array API's statistical and utility functions gpured implements:
# the API's name -> gpured's
GPURED = {
    "sum": "sum", "prod": "prod", "max": "max", "min": "min",
    "mean": "mean", "std": "std", "var": "var",
    "cumulative_sum": "cumulative_sum", "cumulative_prod": "cumulative_prod",
    "all": "all", "any": "any",
}


# complex inputs gpured refused (complex64/128: issue 40), answered by
# NumPy instead so that the rest of each test still runs; xp_plugin.py
# reports a test that needed any as xfail
complex_calls = []


def _complex(x, kw):
    dt = kw.get("dtype")
    return x.dtype.kind == "c" or (dt is not None and
                                   np.dtype(dt).kind == "c")


def _wrap(name, g):
    def f(x, /, **kw):
        x = np.asarray(x)
        try:
            return np.asarray(g(x, **kw))
        except TypeError:
            if not _complex(x, kw):
                raise
            complex_calls.append(name)
            return getattr(_base, name)(x, **kw)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = "gpured.%s on a NumPy array (array API signature)" % g.__name__
    return f


for _api, _gr in GPURED.items():
    globals()[_api] = _wrap(_api, getattr(gpured, _gr))
del _api, _gr


def __getattr__(name):
    return getattr(_base, name)


def __dir__():
    return sorted(set(dir(_base)) | set(GPURED))
