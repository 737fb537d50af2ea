"""A pytest plugin: a test fails when a kernel it ran violated an expectation.

Warp's tests call ``wp.expect_eq`` / ``expect_neq`` / ``expect_near`` inside
kernels and check nothing else: Warp prints the failure and goes on.  With
``pytest_plugins = ["numba_sim.testing"]`` in a ``conftest.py`` (or ``-p
numba_sim.testing``), every test that leaves :func:`numba_sim.expect_failure_count`
higher than it found it fails, naming the count (the messages themselves are
in the test's captured output).  Counted are CPU kernels and funcs run as
Python; compiled CUDA code prints its failures only.
"""

import pytest

from numba_sim.builtins.debug import expect_failure_count


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    before = expect_failure_count()
    result = yield
    failed = expect_failure_count() - before
    if failed:
        pytest.fail(f"{failed} failed expectation{'s' if failed > 1 else ''} (expect_eq, "
                    f"expect_neq or expect_near) in kernels or funcs run by this test; their "
                    f"messages are in the captured output", pytrace=False)
    return result
