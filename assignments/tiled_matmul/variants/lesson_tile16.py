"""The tiled matmul lesson's own kernel (TILE_WIDTH 16), indices as the exercise's text gives
them: ``row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y``."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * cuda.blockDim.y + ty
    col = cuda.blockIdx.x * cuda.blockDim.x + tx
    width = A.shape[0]
    value = float32(0.0)
    for ph in range((width + TILE_WIDTH - 1) // TILE_WIDTH):
        if row < width and ph * TILE_WIDTH + tx < width:
            sA[ty, tx] = A[row, ph * TILE_WIDTH + tx]
        else:
            sA[ty, tx] = 0.0
        if col < width and ph * TILE_WIDTH + ty < width:
            sB[ty, tx] = B[ph * TILE_WIDTH + ty, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(TILE_WIDTH):
            value += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < width and col < width:
        C[row, col] = value
