"""An honest tiled matmul at ``TILE_WIDTH = 8`` (the instructor's solution with 8x8 tiles): timed
against the instructor's kernel at its own TILE_WIDTH 16, and the timing message says so (issue
30: "the lecture on block granularity is the reason an 8x8 tile loses time")."""
from numba import cuda, float32

TILE_WIDTH = 8


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    n = A.shape[0]
    acc = float32(0.0)
    for ph in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        k0 = ph * TILE_WIDTH
        sA[ty, tx] = A[row, k0 + tx] if row < n and k0 + tx < n else float32(0.0)
        sB[ty, tx] = B[k0 + ty, col] if col < n and k0 + ty < n else float32(0.0)
        cuda.syncthreads()
        for k in range(TILE_WIDTH):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc
