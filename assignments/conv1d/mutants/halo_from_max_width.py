# kernelgrade-expect: correctness=failed
"""Takes the halo as MAX_MASK_WIDTH // 2 instead of w // 2, as if every mask were 15 wide: for a
narrower mask the tile is shifted against it and each output is taken around the wrong element.
Right for w = 15 only (the mask width is known at run time, from mask.shape[0])."""

from numba import cuda, float32

BLOCK_SIZE = 64
MAX_MASK_WIDTH = 15
TILE_SIZE = BLOCK_SIZE + MAX_MASK_WIDTH - 1
HALF = MAX_MASK_WIDTH // 2


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE_SIZE, float32)
    n = x.shape[0]
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE
    for k in range(tid, TILE_SIZE, BLOCK_SIZE):
        g = start - HALF + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
