"""Textbook variant: one element per thread in a TILE_DIM x TILE_DIM block (BLOCK_ROWS =
TILE_DIM = 32), the padded shared tile."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 32
PADDED = TILE_DIM + 1


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, PADDED), float32)
    rows, cols = A.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE_DIM + tx
    row = cuda.blockIdx.y * TILE_DIM + ty
    if row < rows and col < cols:
        tile[ty, tx] = A[row, col]
    cuda.syncthreads()
    b_row = cuda.blockIdx.x * TILE_DIM + ty
    b_col = cuda.blockIdx.y * TILE_DIM + tx
    if b_row < cols and b_col < rows:
        B[b_row, b_col] = tile[tx, ty]
