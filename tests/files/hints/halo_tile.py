"""A 2-way bank conflict that padding by one does not remove: a 16x16 block reads an 18-wide
float32 tile (a 2-D stencil's tile with its halo); a warp is two rows of 16 lanes whose words
start 18 apart, and 19 apart after padding: both overlap in two or three banks."""
import numpy as np
from numba import cuda, float32

GRID, BLOCK = (1, 1), (16, 16)


@cuda.jit
def kernel(a, b):
    halo = cuda.shared.array((18, 18), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    halo[ty + 1, tx + 1] = a[ty, tx]
    cuda.syncthreads()
    b[ty, tx] = halo[ty + 1, tx + 1] * float32(2.0)


def make_args():
    return [np.arange(16 * 16, dtype=np.float32).reshape(16, 16), np.zeros((16, 16), np.float32)]
