"""Textbook variant: the inner product over ``cuda.blockDim.x`` (the tile's width read at run
time) instead of the compile-time TILE_WIDTH, so the compiler cannot unroll it."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bw = cuda.blockDim.x
    row = cuda.blockIdx.y * bw + ty
    col = cuda.blockIdx.x * bw + tx
    n = A.shape[0]
    acc = float32(0.0)
    for ph in range((n + bw - 1) // bw):
        sA[ty, tx] = A[row, ph * bw + tx] if row < n and ph * bw + tx < n else float32(0.0)
        sB[ty, tx] = B[ph * bw + ty, col] if col < n and ph * bw + ty < n else float32(0.0)
        cuda.syncthreads()
        for k in range(bw):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc
