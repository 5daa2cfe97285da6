"""Honest tiled matmul written for the benchmark: flat 1-D shared tiles, explicit guards."""
import numba
from numba import cuda

TILE_WIDTH = 8


@cuda.jit
def tiled_matmul(A, B, C):
    sa = cuda.shared.array(64, numba.float32)
    sb = cuda.shared.array(64, numba.float32)
    n = C.shape[0]
    r = cuda.threadIdx.y + cuda.blockDim.y * cuda.blockIdx.y
    c = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    total = numba.float32(0)
    phases = (n + TILE_WIDTH - 1) // TILE_WIDTH
    p = 0
    while p < phases:
        k_a = p * TILE_WIDTH + cuda.threadIdx.x
        k_b = p * TILE_WIDTH + cuda.threadIdx.y
        slot = cuda.threadIdx.y * TILE_WIDTH + cuda.threadIdx.x
        if r < n and k_a < n:
            sa[slot] = A[r, k_a]
        else:
            sa[slot] = 0
        if k_b < n and c < n:
            sb[slot] = B[k_b, c]
        else:
            sb[slot] = 0
        cuda.syncthreads()
        for q in range(TILE_WIDTH):
            total += sa[cuda.threadIdx.y * TILE_WIDTH + q] * sb[q * TILE_WIDTH + cuda.threadIdx.x]
        cuda.syncthreads()
        p += 1
    if r < n:
        if c < n:
            C[r, c] = total
