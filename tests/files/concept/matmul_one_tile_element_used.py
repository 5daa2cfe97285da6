# kernelgrade-expect: concept=failed
# concept-exercise: tiled_matmul
"""Tiles are loaded into shared memory with both barriers, but each thread uses only its own
element of each tile (which it loaded itself) and reads the rest from global memory."""
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
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < n and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < n else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            k = phase * TILE_WIDTH + i
            if i == tx and row < n and k < n:
                a = tile_a[ty, tx]
            else:
                a = A[row, k] if row < n and k < n else float32(0.0)
            if i == ty and k < n and col < n:
                b = tile_b[ty, tx]
            else:
                b = B[k, col] if k < n and col < n else float32(0.0)
            acc += a * b
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc
