# kernelgrade-expect: concept=failed
# concept-exercise: tiled_matmul
"""Tiles go into shared memory and are read back by every thread, with both barriers where the
tiled kernel has them, but the sum multiplies elements read from global memory."""
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    n = A.shape[0]
    acc = float32(0.0)
    check = float32(0.0)
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < n and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < n else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            check += tile_a[ty, i] * tile_b[i, tx]
            k = phase * TILE_WIDTH + i
            if row < n and col < n and k < n:
                acc += A[row, k] * B[k, col]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc + check * float32(0.0)
