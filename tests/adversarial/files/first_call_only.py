# adversarial: right only on its first launch (a cached answer replayed afterwards); on the
# simulator the body keeps Python state between launches, which no GPU kernel can.
# adversarial-exercise: tiled_matmul
# adversarial-message-sim: does not compile for a real GPU
# kernelgrade-expect: concept=error
import numpy as np
from numba import cuda

TILE_WIDTH = 16
CACHE = []


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row == 0 and col == 0:
        if not CACHE:
            CACHE.append(np.asarray(A) @ np.asarray(B))
        if CACHE[0].shape == C.shape:
            C[:, :] = CACHE[0]
