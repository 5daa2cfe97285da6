"""Coalescing of global loads: distinct 32-byte sectors per warp request, by line and array."""

import numpy as np

from autograder.instrument import instrumented_launch
from .conftest import line_of, load

FILE = "load_patterns.py"


def _by_line():
    r = instrumented_launch(load(FILE).loads, 1, 64,
                            [np.ones(128, np.float32), np.ones((64, 8), np.float32),
                             np.zeros(64, np.float32)])
    assert r["error"] is None
    return {(c["line"], c["array"]): c for c in r["global_loads"]["coalescing"]}


def test_sectors_per_warp_request_follow_the_access_pattern():
    got = _by_line()

    def at(text, array):
        c = got[(line_of(FILE, text), array)]
        return c["requests"], c["sectors"] / c["requests"], c["ideal_sectors"] / c["requests"]

    # Two warps: one request each per line, however the interpreter numbers its instructions.
    assert at("a = x[i]", "x") == (2, 4.0, 4.0)
    assert at("b = m[i, 0]", "m") == (2, 32.0, 4.0)
    assert at("c = x[0]", "x") == (2, 1.0, 1.0)
    assert at("d = x[i + 64]", "x") == (2, 2.0, 2.0)   # lanes off the branch send nothing
    column = got[(line_of(FILE, "b = m[i, 0]"), "m")]
    assert column["lines_128"] == 2 * 8   # 32 rows of 32 bytes: 4 rows per 128-byte line
