"""Honest padded transpose written for the benchmark: one element per pass, blockDim strides."""
from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8
PAD = 33


@cuda.jit
def transpose(A, B):
    buf = cuda.shared.array(shape=(TILE_DIM, PAD), dtype=float32)
    h = A.shape[0]
    w = A.shape[1]
    x0 = cuda.blockIdx.x * TILE_DIM
    y0 = cuda.blockIdx.y * TILE_DIM
    k = cuda.threadIdx.y
    while k < TILE_DIM:
        y = y0 + k
        x = x0 + cuda.threadIdx.x
        if x < w and y < h:
            buf[k, cuda.threadIdx.x] = A[y, x]
        k += cuda.blockDim.y
    cuda.syncthreads()
    k = cuda.threadIdx.y
    while k < TILE_DIM:
        out_r = x0 + k
        out_c = y0 + cuda.threadIdx.x
        if out_c < h and out_r < w:
            B[out_r, out_c] = buf[cuda.threadIdx.x, k]
        k += cuda.blockDim.y
