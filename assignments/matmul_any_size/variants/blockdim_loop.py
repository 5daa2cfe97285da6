"""Textbook variant: tile loops over ``cuda.blockDim.x`` (read at run time) instead of the
compile-time TILE_WIDTH, so the compiler cannot unroll the inner product."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bw = cuda.blockDim.x
    row = cuda.blockIdx.y * bw + ty
    col = cuda.blockIdx.x * bw + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    for ph in range((n + bw - 1) // bw):
        sA[ty, tx] = A[row, ph * bw + tx] if row < m and ph * bw + tx < n else float32(0.0)
        sB[ty, tx] = B[ph * bw + ty, col] if col < k and ph * bw + ty < n else float32(0.0)
        cuda.syncthreads()
        for j in range(bw):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = acc
