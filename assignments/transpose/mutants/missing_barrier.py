# kernelgrade-expect: correctness=failed, concept=failed, diagnostic: shared-memory races=failed
"""No barrier between writing the tile and reading it transposed: a thread reads elements other
threads may not have loaded yet (a race)."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8
PADDED = TILE_DIM + 1


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, PADDED), float32)
    rows = A.shape[0]
    cols = A.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile_row = cuda.blockIdx.y * TILE_DIM  # first row of A in this tile
    tile_col = cuda.blockIdx.x * TILE_DIM  # first column of A in this tile
    col = tile_col + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        row = tile_row + ty + j
        if row < rows and col < cols:
            tile[ty + j, tx] = A[row, col]
    # B[c, r] = A[r, c]: threads now run along B's rows (A's columns) with tx along B's columns.
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        b_row = tile_col + ty + j
        if b_row < cols and b_col < rows:
            B[b_row, b_col] = tile[tx, ty + j]
