"""Triggers the shared-memory occupancy hint at 128 threads per block: 48 KB of shared memory
per block lets only 4 blocks (512 threads) share a Hopper SM."""
import numpy as np
from numba import cuda, float32

GRID, BLOCK = 2, 128


@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(12288, float32)
    tid = cuda.threadIdx.x
    for k in range(tid, 12288, 128):
        buf[k] = x[k % x.size]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < out.size:
        out[i] = buf[i]


def make_args():
    return [np.ones(256, np.float32), np.zeros(256, np.float32)]
