"""A naive matmul reading A through A.T and B through B.reshape: still 2n loads per output."""
from numba import cuda, float32
TILE_WIDTH = 16
@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE_WIDTH + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE_WIDTH + cuda.threadIdx.x
    n = A.shape[0]
    At = A.T
    Bf = B.reshape(n * n)
    if row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += At[k, row] * Bf[k * n + col]
        C[row, col] = acc
