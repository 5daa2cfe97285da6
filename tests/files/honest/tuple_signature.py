"""Honest block_sum whose device function declares a tuple return type in its signature string
(``"UniTuple(int64, 2)(int64, int64)"``, which Numba's CUDA target compiles). The loader refused
the signature ("calls something other than a type"): 0 points (issue 30, red team g6)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit("UniTuple(int64, 2)(int64, int64)", device=True)
def where(block, tid):
    return block * BLOCK_SIZE + tid, tid


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    i, tid = where(cuda.blockIdx.x, cuda.threadIdx.x)
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
