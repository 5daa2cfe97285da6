"""Textbook variant: the inner product iterates over the mask array itself
(``for j, m in enumerate(mask)``, which Numba's GPU target compiles to reads of mask[0..w-1]).
The instrumented simulator run recorded a read of mask[w] and took the concept points (issue 30,
red team g3)."""

from numba import cuda, float32

BLOCK_SIZE = 256
MAX_MASK_WIDTH = 15
TILE = BLOCK_SIZE + MAX_MASK_WIDTH - 1


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE
    for k in range(tid, BLOCK_SIZE + 2 * half, BLOCK_SIZE):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j, m in enumerate(mask):
            acc += m * tile[tid + j]
        y[i] = acc
