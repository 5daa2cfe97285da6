"""The same scan done right: read into a register, barrier, then write."""
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
        addend = float32(0.0)
        if tid >= offset:
            addend = temp[tid - offset]
        cuda.syncthreads()
        temp[tid] += addend
        cuda.syncthreads()
        offset *= 2
    out[tid] = temp[tid]
