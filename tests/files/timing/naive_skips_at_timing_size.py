# kernelgrade-expect: concept=failed
# kernelgrade-expect-gpu: timing=failed
"""Issue 20's game: a naive matmul that returns at once at the timing size (width 2048, published
in CONTRACTS.md), so its timed launches cost nothing. Right at every tested size."""
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    n = A.shape[0]
    if n == 2048:
        return
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < n and col < n:
        acc = 0.0
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
