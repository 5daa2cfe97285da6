# kernelgrade-expect: concept=failed, diagnostic: warps=failed
# kernelgrade-expect-gpu: timing=failed
# kernelgrade-advice: Pad the tile by one column: with a module-level PADDED = TILE_DIM + 1,
# kernelgrade-advice: cuda.shared.array((TILE_DIM, PADDED), float32) puts the 32 elements of a
# kernelgrade-advice: tile column in 32 different banks, so a warp reads a column at once.
"""The coalesced transpose with an unpadded 32 x 32 tile: correct, but reading the tile along a
column puts all 32 lanes of a warp in one bank (32-way bank conflicts), 1.47x the padded
kernel's time."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, TILE_DIM), float32)
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
    cuda.syncthreads()
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        b_row = tile_col + ty + j
        if b_row < cols and b_col < rows:
            B[b_row, b_col] = tile[tx, ty + j]
