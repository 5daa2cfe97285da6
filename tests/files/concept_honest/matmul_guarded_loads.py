# concept-exercise: matmul_any_size
"""Honest: tiles loaded under if/else, B's tile stored transposed, the inner loop cut at the
matrix's edge."""
from numba import cuda, float32

TILE_WIDTH = 8


@cuda.jit
def matmul_any_size(A, B, C):
    sa = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sb = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m = A.shape[0]
    n = A.shape[1]
    k = B.shape[1]
    acc = float32(0.0)
    for p in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        if row < m and p * TILE_WIDTH + tx < n:
            sa[ty, tx] = A[row, p * TILE_WIDTH + tx]
        else:
            sa[ty, tx] = 0.0
        if col < k and p * TILE_WIDTH + ty < n:
            sb[tx, ty] = B[p * TILE_WIDTH + ty, col]
        else:
            sb[tx, ty] = 0.0
        cuda.syncthreads()
        for q in range(min(TILE_WIDTH, n - p * TILE_WIDTH)):
            acc += sa[ty, q] * sb[tx, q]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = acc
