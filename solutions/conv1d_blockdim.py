"""The instructor's ``conv1d`` kernel with its loop bounds read from ``cuda.blockDim`` at run time
instead of compile-time constants: a second timing reference (issue 22). Every student is timed
against the faster of it and ``solution.py`` on the GPU that measures, at the instructor's own
constants (issue 30; :func:`autograder.child.timing.choose_reference`). Same contract, launch and
results as ``solution.py``; never shown to a child."""

from numba import cuda, float32

BLOCK_SIZE = 256
MAX_MASK_WIDTH = 15
TILE = BLOCK_SIZE + MAX_MASK_WIDTH - 1  # the block's elements and the largest halo


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE  # index of the block's first output
    # tile[k] = x[start - half + k] for k < BLOCK_SIZE + 2 * half: the block's own elements with
    # `half` halo elements on each side; at most two rounds, as 2 * half < BLOCK_SIZE.
    for k in range(tid, cuda.blockDim.x + 2 * half, cuda.blockDim.x):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
