"""Honest block sum written for the benchmark: each thread first adds two elements."""
from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    acc = cuda.shared.array(BLOCK_SIZE, dtype=float32)
    lane = cuda.threadIdx.x
    start = cuda.blockIdx.x * cuda.blockDim.x
    n = x.shape[0]
    s = float32(0.0)
    if start + lane < n:
        s = x[start + lane]
    acc[lane] = s
    cuda.syncthreads()
    width = cuda.blockDim.x
    while width > 1:
        width = width // 2
        if lane < width:
            acc[lane] += acc[lane + width]
        cuda.syncthreads()
    if lane == 0:
        partial[cuda.blockIdx.x] = acc[0]
