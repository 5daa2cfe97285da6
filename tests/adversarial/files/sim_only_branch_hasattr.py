# adversarial: hasattr on an argument: only the simulator's array object has `_ary`. The
# branch it guards is a correct naive product.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect-sim: correctness=error
# adversarial-message-sim: the built-in hasattr is not available in a kernel
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row, col = cuda.grid(2)
    n = A.shape[0]
    if hasattr(A, "_ary") and row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
