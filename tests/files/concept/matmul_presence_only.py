# kernelgrade-expect: concept=failed
# concept-exercise: tiled_matmul
# concept-message: reads A and B from global memory 8192 times in block (0, 0, 0) (for its 256 output elements)
# concept-message: the instructor's kernel at TILE_WIDTH 16 needs about 512 there
"""A naive matmul that declares an 8-byte shared array and two barriers it never needs."""
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    unused = cuda.shared.array(2, float32)
    row = cuda.blockIdx.y * TILE_WIDTH + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE_WIDTH + cuda.threadIdx.x
    n = A.shape[0]
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        unused[0] = float32(0.0)
    cuda.syncthreads()
    if row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
