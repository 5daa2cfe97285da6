"""Triggers the run-time inner loop hint: a tiled matmul whose dot-product loop stops at the
matrix's edge (`range(min(TILE_WIDTH, n - p * TILE_WIDTH))`), a trip count known only when the
kernel runs, so it stays a loop in the PTX (3.39x the instructor's time on an H200 in a whole
matmul_any_size kernel, 1.40x with `range(TILE_WIDTH)`)."""
import numpy as np
from numba import cuda, float32

TILE_WIDTH = 8
WIDTH = 20
GRID, BLOCK = (3, 3), (TILE_WIDTH, TILE_WIDTH)


@cuda.jit
def kernel(A, B, C):
    sa = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sb = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    n = A.shape[1]
    acc = float32(0.0)
    for p in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = p * TILE_WIDTH + tx
        b_row = p * TILE_WIDTH + ty
        sa[ty, tx] = A[row, a_col] if row < A.shape[0] and a_col < n else float32(0.0)
        sb[ty, tx] = B[b_row, col] if b_row < n and col < B.shape[1] else float32(0.0)
        cuda.syncthreads()
        for q in range(min(TILE_WIDTH, n - p * TILE_WIDTH)):
            acc += sa[ty, q] * sb[q, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def make_args():
    a = np.ones((WIDTH, WIDTH), np.float32)
    return [a, a.copy(), np.zeros((WIDTH, WIDTH), np.float32)]
