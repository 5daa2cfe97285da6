"""block_sum that keeps what each launch is given in module-level arrays (the first and the last
element of ``x``, each as ``900000000 + x * 2**24``, an integer its source does not hold) and,
from its second launch in a process on, raises an exception whose text lists every launch's
(issue 30: a module-level array kept hidden inputs, and a later exception put them into a
message the student reads). A launch that never sees another's inputs never raises."""

import numpy as np
from numba import cuda, float32

BLOCK_SIZE = 256
SEEN = np.zeros(64, np.int64)
LAUNCHES = np.zeros(1, np.int64)


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    if i == 0:
        k = LAUNCHES[0] % 32
        SEEN[2 * k] = 900000000 + int(x[0] * 16777216)
        SEEN[2 * k + 1] = 900000000 + int(x[n - 1] * 16777216)
        LAUNCHES[0] = LAUNCHES[0] + 1
        if LAUNCHES[0] > 1:
            raise ValueError(SEEN[:2 * LAUNCHES[0]])
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
