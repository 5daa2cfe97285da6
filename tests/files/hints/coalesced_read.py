"""The same transpose without the uncoalesced-loads hint: it reads A along a row (32
consecutive float32 per warp request: 4 sectors) and writes B down a column."""
import numpy as np
from numba import cuda

N = 64
GRID, BLOCK = (2, 8), (32, 8)


@cuda.jit
def kernel(a, b):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < a.shape[0] and col < a.shape[1]:
        b[col, row] = a[row, col]


def make_args():
    return [np.arange(N * N, dtype=np.float32).reshape(N, N), np.zeros((N, N), np.float32)]
