# kernelgrade-expect-sim: correctness=error
# kernelgrade-expect-gpu: correctness=failed
"""No bounds checks: right only when rows and cols are multiples of TILE_DIM (an IndexError on
the simulator; reads and writes in the guard bands on a GPU)."""

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
        tile[ty + j, tx] = A[row, col]
    cuda.syncthreads()
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        b_row = tile_col + ty + j
        B[b_row, b_col] = tile[tx, ty + j]
