# kernelgrade-expect: concept=failed
# concept-exercise: matmul_any_size
"""A naive matmul with a shared row it fills and reads back within each thread, and two
barriers around it."""
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    scratch = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    for i in range(n):
        scratch[ty, tx] = A[row, i] if row < m else float32(0.0)
        cuda.syncthreads()
        if row < m and col < k:
            acc += scratch[ty, tx] * B[i, col]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = acc
