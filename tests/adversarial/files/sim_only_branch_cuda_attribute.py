# adversarial: an attribute of numba.cuda that is a function on a GPU and None on the simulator,
# tested inside the kernel (no top-level statement to skip): Numba decides `is None` while
# compiling and drops the branch the simulator takes.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect-sim: correctness=error
# adversarial-message-sim: `cuda.compile_all` is None here, not a function
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    row, col = cuda.grid(2)
    n = A.shape[0]
    if cuda.compile_all is None and row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
