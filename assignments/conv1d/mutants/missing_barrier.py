# kernelgrade-expect: correctness=failed, concept=failed, diagnostic: shared-memory races=failed
"""No barrier between loading the tile and computing from it: a thread reads tile elements (its
neighbours' and the halo) that other threads may not have written yet (a race). The outputs
depend on the order the threads run in."""

from numba import cuda, float32

BLOCK_SIZE = 64
MAX_MASK_WIDTH = 15
TILE_SIZE = BLOCK_SIZE + MAX_MASK_WIDTH - 1


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE_SIZE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE
    for k in range(tid, BLOCK_SIZE + 2 * half, BLOCK_SIZE):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
