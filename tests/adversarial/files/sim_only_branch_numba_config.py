# adversarial: the kernel reads Numba's setting for the simulator itself. Numba freezes it to 0
# when it compiles for a GPU and drops the branch; the simulator takes it: a correct naive
# product there, nothing on a GPU.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect-sim: correctness=error
# adversarial-message-sim: `numba.config.ENABLE_CUDASIM` is 1 here, not a function
import numba
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row, col = cuda.grid(2)
    n = A.shape[0]
    if numba.config.ENABLE_CUDASIM and row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
