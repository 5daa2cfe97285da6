"""No occupancy hint: 512 bytes of shared memory per block of 128 threads; thread slots,
not shared memory, bound the blocks per SM."""
import numpy as np
from numba import cuda, float32

GRID, BLOCK = 2, 128


@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(128, float32)
    tid = cuda.threadIdx.x
    for k in range(tid, 128, 128):
        buf[k] = x[k % x.size]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < out.size:
        out[i] = buf[i]


def make_args():
    return [np.ones(256, np.float32), np.zeros(256, np.float32)]
