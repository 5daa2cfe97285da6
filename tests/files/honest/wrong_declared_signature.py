"""Not honest for this exercise: block_sum declared for float64 arrays, launched with float32
ones. The simulator ignores a declared signature and computes the right sums; a GPU finds no
matching definition for any launch. The compile check says so, so the simulator grades it as
a GPU does: no correctness point counts."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit("void(float64[:], float64[:])")
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
