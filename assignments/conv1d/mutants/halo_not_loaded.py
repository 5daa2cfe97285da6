# kernelgrade-expect: correctness=failed, correctness=passed, concept=passed
# kernelgrade-advice: Load the halo: an output within w // 2 of its block's edge needs the
# kernelgrade-advice: w // 2 elements of x left and right of the block's own, so the tile holds
# kernelgrade-advice: BLOCK_SIZE + 2 * (w // 2) elements, tile[k] = x[block start - w // 2 + k],
# kernelgrade-advice: loaded by the block's threads before the barrier (some load two). Only
# kernelgrade-advice: ghost cells, outside 0 <= index < n, are 0.
"""The tile holds only the block's own elements, no halo: a neighbour in the next or previous
block counts as 0, as if it were a ghost cell. Right inside each block, wrong at every block
edge (the w // 2 outputs next to it)."""

from numba import cuda, float32

BLOCK_SIZE = 64
MAX_MASK_WIDTH = 15


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(BLOCK_SIZE, float32)
    n = x.shape[0]
    w = mask.shape[0]
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    tile[tid] = x[i] if i < n else float32(0.0)
    cuda.syncthreads()
    if i < n:
        acc = float32(0.0)
        for j in range(w):
            k = tid + j - w // 2
            if k >= 0 and k < BLOCK_SIZE:
                acc += mask[j] * tile[k]
        y[i] = acc
