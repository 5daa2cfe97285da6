"""Instructor solution for ``transpose`` (shared-memory bank conflicts).

A: float32 (rows, cols); B: float32 (cols, rows); any rows, cols >= 1. B = A.T exactly.
Launch: transpose[(ceil(cols / TILE_DIM), ceil(rows / TILE_DIM)), (TILE_DIM, BLOCK_ROWS)](A, B).

Each block moves one TILE_DIM x TILE_DIM tile; each thread copies TILE_DIM / BLOCK_ROWS
elements. Reads of A and writes of B are both coalesced (consecutive threadIdx.x, consecutive
addresses); the transpose happens in shared memory, read along a column. The tile has one
padding column, so a column's 32 elements fall in 32 different banks (no bank conflicts).

The padded width is a module-level constant: ``cuda.shared.array((TILE_DIM, TILE_DIM + 1), ...)``
runs on the simulator but fails Numba's typing for a real GPU (the shape must be a tuple of
constants, not an expression). TILE_DIM is always 32 (CONTRACTS.md), so PADDED stays right when
the grader sets the student's constants on this module.
"""

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
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        row = tile_row + ty + j
        if row < rows and col < cols:
            tile[ty + j, tx] = A[row, col]
    cuda.syncthreads()
    # B[c, r] = A[r, c]: threads now run along B's rows (A's columns) with tx along B's columns.
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        b_row = tile_col + ty + j
        if b_row < cols and b_col < rows:
            B[b_row, b_col] = tile[tx, ty + j]
