"""Writes one element past its shared array: the simulator raises IndexError in thread 64."""
from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    buf[tid] = x[tid]
    cuda.syncthreads()
    out[tid] = buf[tid]
