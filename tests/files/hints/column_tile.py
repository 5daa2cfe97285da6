"""Triggers the bank-conflict hint: a 32x32 float32 tile read along a column (32-way)."""
import numpy as np
from numba import cuda, float32

TILE = 32
GRID, BLOCK = (1, 1), (32, 8)


@cuda.jit
def kernel(a, b):
    tile = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    for r in range(ty, TILE, 8):
        tile[r, tx] = a[r, tx]
    cuda.syncthreads()
    for r in range(ty, TILE, 8):
        b[r, tx] = tile[tx, r]


def make_args():
    return [np.arange(32 * 32, dtype=np.float32).reshape(32, 32), np.zeros((32, 32), np.float32)]
