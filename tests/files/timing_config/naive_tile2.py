# kernelgrade-expect: concept=failed
# kernelgrade-expect-gpu: timing=failed
"""Issue 30's game: a naive matmul (no tiles) that sets ``TILE_WIDTH = 2``, so the launch is of
2x2 blocks. When the grader timed the instructor's kernel at the student's constants, it beat
that kernel crippled to 2x2 tiles (0.35x, 25/25 timing points on an H100); against the
instructor's kernel at its own TILE_WIDTH 16 it loses them. Right at every tested size."""
from numba import cuda, float32

TILE_WIDTH = 2


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * TILE_WIDTH + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE_WIDTH + cuda.threadIdx.x
    n = A.shape[0]
    if row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
