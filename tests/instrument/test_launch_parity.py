"""An instrumented launch is not told apart from a graded one (issue 30, goal 1): what a kernel
can observe of the values it computes (types, Python int and float arithmetic) is the same."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autograder.instrument import instrumented_launch
from autograder.instrument.taint import _wrap_function, taint, tainted
from .conftest import load


def test_a_math_function_of_a_loaded_value_keeps_python_s_types_and_the_taint():
    x = tainted(np.float32(3.0), 1, 0, 0)
    f = _wrap_function(math.floor)(x * 0.5)
    assert isinstance(f, int) and f == 1 and taint(f) == (1, 0, 0)
    assert (f * 0 + 2) ** 64 == 2 ** 64 and taint((f * 0 + 2) ** 64) == (1, 0, 0)
    s = _wrap_function(math.sqrt)(x)
    assert isinstance(s, float) and not isinstance(s, np.generic) and taint(s) == (1, 0, 0)
    with pytest.raises(OverflowError):
        (s * 0.0 + 10.0) ** 400
    # NumPy sees a plain Python number: int32 + int stays int32, as in a graded launch
    y = np.int32(5) + f
    assert type(y).__mro__[1] is np.int32 or type(y) is np.int32
    assert taint(y) == (1, 0, 0)
    with pytest.raises(OverflowError):
        np.int32(5) * (f * 2 ** 40)


def test_the_kernel_sees_the_same_values_in_both_launches(sim_only):
    kernel = load("tells_launches_apart.py").probe
    x = np.array([3.0, 2.0, 1.5, 7.0], np.float32)
    graded = np.full(9, -1, np.int32)
    kernel[1, 32](x, graded)
    analysed = np.full(9, -1, np.int32)
    r = instrumented_launch(kernel, 1, 32, [x, analysed])
    assert r["error"] is None
    np.testing.assert_array_equal(analysed, graded)


def test_numba_s_scalar_casts_keep_the_taint_in_the_analysed_launch_only():
    """``float32(a)`` of a loaded ``a`` still depends on ``a`` (a cast no longer launders a
    thread's own load into a value that seems to come from shared memory), and its type is
    the plain one; outside the launch Numba's cast is as it was."""
    from numba import float32, int32

    from autograder.instrument.taint import _plain_type, swapped_math

    a = tainted(np.float32(2.5), 1, 4, 0)
    with swapped_math([]):
        c = float32(a)
        assert taint(c) == (1, 4, 0) and _plain_type(c) is np.float32 and c == np.float32(2.5)
        assert taint(int32(a)) == (1, 4, 0) and _plain_type(int32(a)) is np.int32
        assert taint(float32(0.0)) is None
    assert taint(float32(a)) is None
