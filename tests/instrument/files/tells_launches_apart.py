"""A kernel that writes what it can observe of its launch: each output is 1 or 0, and must be
the same in an instrumented launch as in a plain (graded) one (issue 30, goal 1)."""

import math

import numpy as np
from numba import cuda, float32, int32


@cuda.jit
def probe(x, out):
    i = cuda.threadIdx.x
    sh = cuda.shared.array(2, float32)
    loc = cuda.local.array(2, float32)
    if i == 0:
        out[8] = 1 if type(sh) is np.ndarray and type(loc) is np.ndarray else 0
        f = math.floor(x[0] * 0.5)                # an int in a graded launch
        out[0] = 1 if (f * 0 + 2) ** 64 == 0 else 0   # int64 would wrap to 0
        out[1] = 1 if type(f) is int else 0
        s = math.sqrt(x[1])                        # a float
        out[2] = 1 if type(s) is float else 0
        out[3] = 1 if str(f) == "1" and str(s) == "1.4142135623730951" else 0
        c = float32(x[2])
        out[4] = 1 if type(c) is np.float32 else 0
        n = int32(x[3])
        out[5] = 1 if type(n) is np.int32 else 0
        out[6] = 1 if type(x[0]) is np.float32 else 0
        m, e = math.frexp(x[1])
        out[7] = 1 if type(e) is int and type(m) is float else 0
