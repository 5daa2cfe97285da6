# kernelgrade-expect: concept=failed, memory accesses=failed
# kernelgrade-advice: Load the halo: an output within w // 2 of its block's edge needs the
# kernelgrade-advice: w // 2 elements of x left and right of the block's own, so the tile holds
# kernelgrade-advice: BLOCK_SIZE + 2 * (w // 2) elements, tile[k] = x[block start - w // 2 + k],
# kernelgrade-advice: loaded by the block's threads before the barrier (some load two). Only
# kernelgrade-advice: ghost cells, outside 0 <= index < n, are 0.
"""The tile is declared with room for the halo (BLOCK_SIZE + MAX_MASK_WIDTH - 1 elements) and
the block syncs, but only the block's own elements are loaded: every output within w // 2 of a
block edge reads tile elements no thread of the block wrote, whatever they held (another block's
data on a GPU, the simulator's leftovers). Right or wrong by luck, output by output (issue 30)."""

from numba import cuda, float32

BLOCK_SIZE = 64
MAX_MASK_WIDTH = 15
TILE = BLOCK_SIZE + MAX_MASK_WIDTH - 1


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    tile[tid + half] = x[i] if i < n else float32(0.0)
    cuda.syncthreads()
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
