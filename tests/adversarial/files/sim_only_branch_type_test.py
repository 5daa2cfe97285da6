# adversarial: a Python type test in the kernel. The simulator passes its own array objects, so
# `isinstance(A, np.ndarray)` is False there; Numba, where it compiles the test, decides it while
# compiling. The branch the simulator takes multiplies with NumPy.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect-sim: correctness=error
# adversarial-message-sim: the built-in isinstance is not available in a kernel
import numpy as np
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    if not isinstance(A, np.ndarray) and cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 \
            and cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0:
        C[:, :] = np.asarray(A) @ np.asarray(B)
