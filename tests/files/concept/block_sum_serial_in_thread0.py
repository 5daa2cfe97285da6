# kernelgrade-expect: concept=failed
# concept-exercise: block_sum
# concept-message: one thread of your kernel reads shared memory 257 times in a block
"""The block's values go into shared memory, then thread 0 adds them up one by one: a serial
sum through shared memory, with a barrier after the load and another after the sum."""
from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    if tid == 0:
        acc = float32(0.0)
        for k in range(BLOCK_SIZE):
            acc += sums[k]
        sums[0] = acc
    cuda.syncthreads()
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
