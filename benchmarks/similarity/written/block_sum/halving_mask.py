"""Honest block sum written for the benchmark: halving with a shift, guard on the load."""
import numba
from numba import cuda

BLOCK_SIZE = 128


@cuda.jit
def block_sum(x, partial):
    buf = cuda.shared.array(BLOCK_SIZE, numba.float32)
    t = cuda.threadIdx.x
    g = cuda.grid(1)
    v = numba.float32(0)
    if g < x.size:
        v = x[g]
    buf[t] = v
    cuda.syncthreads()
    half = BLOCK_SIZE >> 1
    while half >= 1:
        if t < half:
            buf[t] = buf[t] + buf[t + half]
        cuda.syncthreads()
        half = half >> 1
    if t == 0:
        partial[cuda.blockIdx.x] = buf[0]
