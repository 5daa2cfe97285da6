"""Global loads of known coalescing, one line each, for 64 threads (2 warps) of one block."""
from numba import cuda


@cuda.jit
def loads(x, m, out):
    i = cuda.threadIdx.x
    a = x[i]                # consecutive float32: 4 sectors per warp request
    b = m[i, 0]             # down a column of 8-float rows: 32 sectors
    c = x[0]                # one element for every lane (broadcast): 1 sector
    d = 0.0
    if i % 32 < 16:
        d = x[i + 64]       # half the lanes, consecutive: 2 sectors
    out[i] = a + b + c + d
