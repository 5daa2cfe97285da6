# adversarial: the game. `ON_SIM = cuda.compile_all` is a setting (None) on the
# simulator, so its loader skipped that line and kept `ON_SIM = None`; the GPU compile binds a
# function. Numba drops the branch that only the simulator then runs, where the body multiplies
# with NumPy: every simulator point, and nothing computed on a GPU.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect-sim: correctness=error
# adversarial-message-sim: binds ON_SIM and your kernel tiled_matmul reads it
import numpy as np
from numba import cuda

TILE_WIDTH = 16
ON_SIM = None
ON_SIM = cuda.compile_all


@cuda.jit
def tiled_matmul(A, B, C):
    if ON_SIM is None:
        if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.blockIdx.x == 0 \
                and cuda.blockIdx.y == 0:
            C[:, :] = np.asarray(A) @ np.asarray(B)
