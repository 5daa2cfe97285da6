"""Honest padded transpose written for the benchmark: swapped block offsets computed first."""
import numba
from numba import cuda

TILE_DIM = 32
BLOCK_ROWS = 16
WIDE = TILE_DIM + 1


@cuda.jit
def transpose(A, B):
    ty, tx = cuda.threadIdx.y, cuda.threadIdx.x
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    nrows, ncols = A.shape
    smem = cuda.shared.array((TILE_DIM, WIDE), numba.float32)
    in_c = bx * TILE_DIM + tx
    out_c = by * TILE_DIM + tx
    for s in range(TILE_DIM // BLOCK_ROWS):
        rr = ty + s * BLOCK_ROWS
        in_r = by * TILE_DIM + rr
        if in_r < nrows:
            if in_c < ncols:
                smem[rr, tx] = A[in_r, in_c]
    cuda.syncthreads()
    for s in range(TILE_DIM // BLOCK_ROWS):
        rr = ty + s * BLOCK_ROWS
        out_r = bx * TILE_DIM + rr
        if out_r < ncols and out_c < nrows:
            B[out_r, out_c] = smem[tx, rr]
