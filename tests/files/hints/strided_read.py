"""Triggers the uncoalesced-loads hint: a transpose that reads A down a column (each lane of a
warp in another row: 32 sectors per warp request) and writes B along a row."""
import numpy as np
from numba import cuda

N = 64
GRID, BLOCK = (2, 8), (32, 8)


@cuda.jit
def kernel(a, b):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < b.shape[0] and col < b.shape[1]:
        b[row, col] = a[col, row]


def make_args():
    return [np.arange(N * N, dtype=np.float32).reshape(N, N), np.zeros((N, N), np.float32)]
