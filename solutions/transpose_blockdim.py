"""The instructor's ``transpose`` kernel with its loop bounds read from ``cuda.blockDim`` at run time
instead of compile-time constants: a second timing reference (issue 22). Every student is timed
against the faster of it and ``solution.py`` on the GPU that measures, at the instructor's own
constants (issue 30; :func:`autograder.child.timing.choose_reference`). Same contract, launch and
results as ``solution.py``; never shown to a child."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8
PADDED = TILE_DIM + 1


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, PADDED), float32)
    rows = A.shape[0]
    cols = A.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile_row = cuda.blockIdx.y * TILE_DIM  # first row of A in this tile
    tile_col = cuda.blockIdx.x * TILE_DIM  # first column of A in this tile
    col = tile_col + tx
    for j in range(0, TILE_DIM, cuda.blockDim.y):
        row = tile_row + ty + j
        if row < rows and col < cols:
            tile[ty + j, tx] = A[row, col]
    cuda.syncthreads()
    # B[c, r] = A[r, c]: threads now run along B's rows (A's columns) with tx along B's columns.
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, cuda.blockDim.y):
        b_row = tile_col + ty + j
        if b_row < cols and b_col < rows:
            B[b_row, b_col] = tile[tx, ty + j]
