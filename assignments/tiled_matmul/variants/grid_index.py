"""Textbook variant: ``row, col`` from ``cuda.grid(2)`` (x is the column)."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = A.shape[0]
    tmp = float32(0.0)
    for t in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        sA[ty, tx] = A[row, t * TILE_WIDTH + tx] if row < n and t * TILE_WIDTH + tx < n else 0.0
        sB[ty, tx] = B[t * TILE_WIDTH + ty, col] if col < n and t * TILE_WIDTH + ty < n else 0.0
        cuda.syncthreads()
        for k in range(TILE_WIDTH):
            tmp += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = tmp
