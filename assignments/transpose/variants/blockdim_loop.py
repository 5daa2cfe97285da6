"""Textbook variant: the tile's row loops step by ``cuda.blockDim.y`` (read at run time)
instead of the compile-time BLOCK_ROWS."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8
PADDED = TILE_DIM + 1


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, PADDED), float32)
    rows, cols = A.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE_DIM + tx
    y = cuda.blockIdx.y * TILE_DIM + ty
    for j in range(0, TILE_DIM, cuda.blockDim.y):
        if y + j < rows and x < cols:
            tile[ty + j, tx] = A[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE_DIM + tx
    y = cuda.blockIdx.x * TILE_DIM + ty
    for j in range(0, TILE_DIM, cuda.blockDim.y):
        if y + j < cols and x < rows:
            B[y + j, x] = tile[tx, ty + j]
