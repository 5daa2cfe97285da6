"""Hillis-Steele inclusive scan that reads and writes the same shared array between barriers:
thread t reads temp[t - offset] while thread t - offset may already have added into it."""
from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit
def scan(x, out):
    temp = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    temp[tid] = x[tid]
    cuda.syncthreads()
    offset = 1
    while offset < BLOCK_SIZE:
        if tid >= offset:
            temp[tid] += temp[tid - offset]
        cuda.syncthreads()
        offset *= 2
    out[tid] = temp[tid]
