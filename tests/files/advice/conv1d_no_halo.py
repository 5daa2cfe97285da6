"""A student's 1-D convolution that makes the halo mistake its own way (not the known-bad file
``assignments/conv1d/mutants/halo_not_loaded.py``): each thread copies its own element into the
tile and the sum skips the neighbours that fall outside the block's tile, as if they were ghost
cells. Right for one block and for w = 1, wrong next to every block edge; no race, no access out
of bounds (tests/test_advice.py)."""

from numba import cuda, float32

BLOCK_SIZE = 128
MAX_MASK_WIDTH = 15


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(BLOCK_SIZE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    if i < n:
        tile[t] = x[i]
    else:
        tile[t] = 0.0
    cuda.syncthreads()
    if i < n:
        total = float32(0.0)
        for j in range(mask.shape[0]):
            k = t - half + j
            if 0 <= k < BLOCK_SIZE:  # a neighbour in another block is skipped
                total += tile[k] * mask[j]
        y[i] = total
