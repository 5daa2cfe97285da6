# kernelgrade-expect: concept=failed
# concept-exercise: tiled_matmul
"""A naive matmul whose running sum lives in a shared array (each thread its own element), with
both barriers at the start of the kernel, where they order nothing."""
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    acc = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    cuda.syncthreads()
    cuda.syncthreads()
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    n = A.shape[0]
    acc[ty, tx] = float32(0.0)
    if row < n and col < n:
        for k in range(n):
            acc[ty, tx] += A[row, k] * B[k, col]
        C[row, col] = acc[ty, tx]
