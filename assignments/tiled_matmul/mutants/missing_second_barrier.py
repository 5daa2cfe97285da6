# kernelgrade-expect: correctness=failed, concept=failed, diagnostic: shared-memory races=failed
# kernelgrade-advice: A tile must not change while a thread of the block may still read it:
# kernelgrade-advice: each phase needs a cuda.syncthreads() after the tiles are loaded and
# kernelgrade-advice: another after the products are summed, before the next phase loads.
"""Tiled kernel without the barrier before the next phase overwrites the tiles (a race)."""

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
    width = A.shape[0]
    acc = float32(0.0)
    for phase in range((width + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < width and a_col < width else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < width and col < width else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
    if row < width and col < width:
        C[row, col] = acc
