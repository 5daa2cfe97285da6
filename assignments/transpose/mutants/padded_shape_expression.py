# kernelgrade-expect: concept=error
# kernelgrade-expect-gpu: correctness=error
"""Pads the tile with an expression in the shape, ``(TILE_DIM, TILE_DIM + 1)``: the simulator
runs it, but Numba's typing for a real GPU rejects it (a shared array's shape must be a constant
or a tuple of global constants); the fix is a module-level ``PADDED = TILE_DIM + 1``."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, TILE_DIM + 1), float32)
    rows = A.shape[0]
    cols = A.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile_row = cuda.blockIdx.y * TILE_DIM
    tile_col = cuda.blockIdx.x * TILE_DIM
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
