"""Triggers the loop-bound hint: the sequential reduction with its loop bound from
cuda.blockDim.x (known only at run time: the compiler keeps the loop) where the block size is
the constant BLOCK_SIZE (sequential_sum.py: the same loop, unrolled)."""
import numpy as np
from numba import cuda, float32

BLOCK_SIZE = 256
GRID, BLOCK = 2, BLOCK_SIZE


@cuda.jit
def kernel(x, partial):
    buf = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    buf[tid] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            buf[tid] += buf[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


def make_args():
    return [np.ones(512, np.float32), np.zeros(2, np.float32)]
