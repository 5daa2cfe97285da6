# kernelgrade-expect: concept=failed
"""Right answers without the concept: each thread reads its w inputs straight from global
memory, with the ghost-cell check in the inner loop (no tile, no shared memory, no barrier)."""

from numba import cuda, float32

BLOCK_SIZE = 128
MAX_MASK_WIDTH = 15


@cuda.jit
def conv1d(x, mask, y):
    n = x.shape[0]
    w = mask.shape[0]
    i = cuda.blockIdx.x * BLOCK_SIZE + cuda.threadIdx.x
    if i < n:
        acc = float32(0.0)
        for j in range(w):
            g = i + j - w // 2
            if g >= 0 and g < n:
                acc += mask[j] * x[g]
        y[i] = acc
