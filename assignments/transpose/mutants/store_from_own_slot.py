# kernelgrade-expect: concept=failed
# kernelgrade-expect-gpu: timing=failed
# concept-message: another thread
"""A naive transpose dressed up as a tiled one: each thread puts its element of A in its own
slot of a padded tile, reads a neighbour's slot once after the barrier (a read of a value
another thread wrote, without a bank conflict), and stores B from its own slot, down a column
of B. The output never passed from one thread to another (issue 30)."""

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
    tile_row = cuda.blockIdx.y * TILE_DIM
    col = cuda.blockIdx.x * TILE_DIM + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        row = tile_row + ty + j
        if row < rows and col < cols:
            tile[ty + j, tx] = A[row, col]
    cuda.syncthreads()
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        row = tile_row + ty + j
        if row < rows and col < cols:
            neighbour = tx ^ 1
            if cuda.blockIdx.x * TILE_DIM + neighbour < cols:
                seen = tile[ty + j, neighbour]
                if seen != seen:   # never: a NaN is not in A
                    tile[ty + j, tx] = seen
            B[col, row] = tile[ty + j, tx]
