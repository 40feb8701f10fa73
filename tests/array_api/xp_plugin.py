"""pytest plugin for the array-api-tests run (``make test-array-api``,
loaded with ``-p xp_plugin``).  gpured has no complex dtypes yet: the
namespace (xp_gpured.py) answers a complex input gpured refuses with
NumPy's result and notes it, so every real-dtype example of the test still
runs against gpured; a test that passed but needed such a call is
reported xfail "complex64/128: issue 40" (non-strict in effect: once
complex lands nothing is noted and it simply passes).  Any failure fails.
(The suite's ARRAY_API_TESTS_SKIP_DTYPES cannot drop both complex dtypes.)
"""
import pytest

import xp_gpured


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    del xp_gpured.complex_calls[:]
    res = yield
    if xp_gpured.complex_calls:
        pytest.xfail("complex64/128: issue 40 (%d complex calls answered by "
                     "NumPy: %s)" % (len(xp_gpured.complex_calls),
                                     ", ".join(sorted(set(
                                         xp_gpured.complex_calls)))))
    return res
