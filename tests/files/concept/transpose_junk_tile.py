# kernelgrade-expect: concept=failed
# concept-exercise: transpose
# concept-message: 0% of your output elements are stored from a value another thread of the block wrote to shared memory
"""A padded tile filled with thread numbers and read back transposed after a barrier; the
output is copied straight from the input, one load per element like the real transpose."""
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
    tile_col = cuda.blockIdx.x * TILE_DIM
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        tile[ty + j, tx] = float32(tx)
    cuda.syncthreads()
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        b_row = tile_col + ty + j
        if b_row < cols and b_col < rows:
            v = tile[tx, ty + j]
            B[b_row, b_col] = A[b_col, b_row] + v * float32(0.0)
