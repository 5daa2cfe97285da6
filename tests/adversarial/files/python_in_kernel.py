# adversarial: a @cuda.jit "kernel" whose body multiplies on the host with NumPy. The simulator
# runs the body as Python, so it gets the right answer there; it is not a kernel a GPU can run.
# adversarial-exercise: tiled_matmul
# adversarial-message-sim: right on the simulator, but it does not compile for a real GPU
# kernelgrade-expect: correctness=error, concept=error
import numpy as np
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.blockIdx.x == 0 \
            and cuda.blockIdx.y == 0:
        C[:, :] = np.asarray(A) @ np.asarray(B)
