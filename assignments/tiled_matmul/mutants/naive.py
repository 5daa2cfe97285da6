# kernelgrade-expect: concept=failed
# kernelgrade-expect-gpu: timing=failed
"""A correct kernel that reads A and B from global memory only: no tiles, no barriers."""
from numba import cuda
TILE_WIDTH = 16
@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    n = A.shape[0]
    if row < n and col < n:
        acc = 0.0
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
