"""Matrix multiplication straight from global memory: every thread loads a row of A and a
column of B, 2n loads per element of C."""
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = A.shape[0]
    if row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
