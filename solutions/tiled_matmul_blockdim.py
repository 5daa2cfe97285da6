"""The instructor's ``tiled_matmul`` kernel with its loop bounds read from ``cuda.blockDim`` at run time
instead of compile-time constants: a second timing reference (issue 22). Every student is timed
against the faster of it and ``solution.py`` on the GPU that measures, at the instructor's own
constants (issue 30; :func:`autograder.child.timing.choose_reference`). Same contract, launch and
results as ``solution.py``; never shown to a child."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    acc = float32(0.0)
    for phase in range((width + cuda.blockDim.x - 1) // cuda.blockDim.x):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < width and a_col < width else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < width and col < width else float32(0.0)
        cuda.syncthreads()
        for i in range(cuda.blockDim.x):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < width and col < width:
        C[row, col] = acc
