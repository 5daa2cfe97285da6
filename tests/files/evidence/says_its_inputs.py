"""block_sum whose every launch raises an exception whose text holds its inputs: the first and
the last element of ``x``, each as ``900000000 + x * 2**24`` (an integer its source does not
hold). Where the inputs are public the student may read it; where they are hidden, the
instructor only (issue 30)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    if tid == 0:
        raise ValueError(900000000 + int(x[0] * 16777216),
                         900000000 + int(x[n - 1] * 16777216))
    sums[tid] = x[i] if i < n else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
