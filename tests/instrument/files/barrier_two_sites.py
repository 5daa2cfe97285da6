"""A barrier in each arm of an ``if``: the two halves of the block wait at different lines."""
from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit
def halves(x, out):
    buf = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    if tid < BLOCK_SIZE // 2:
        buf[tid] = x[tid] * 2
        cuda.syncthreads()
    else:
        buf[tid] = x[tid] + 1
        cuda.syncthreads()
    out[tid] = buf[BLOCK_SIZE - 1 - tid]
