"""Triggers the no-reuse hint: a naive matmul that reads a row of A and a column of B from
global memory for every element of C (2 * width loads per element, where tiles of 16 need
2 * ceil(width / 16)), at width 37 (TILE_WIDTH 16)."""
import numpy as np
from numba import cuda, float32

TILE_WIDTH = 16
WIDTH = 37
GRID, BLOCK = (3, 3), (TILE_WIDTH, TILE_WIDTH)


@cuda.jit
def kernel(A, B, C):
    row = cuda.blockIdx.y * TILE_WIDTH + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE_WIDTH + cuda.threadIdx.x
    width = A.shape[0]
    if row < width and col < width:
        acc = float32(0.0)
        for k in range(width):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def make_args():
    a = np.ones((WIDTH, WIDTH), np.float32)
    return [a, a.copy(), np.zeros((WIDTH, WIDTH), np.float32)]
