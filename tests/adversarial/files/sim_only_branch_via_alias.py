# adversarial: the skipped rebinding one step removed. A kept constant copies the name the
# simulator's loader leaves as 0 (`FLAG = cuda.compile_all` skipped there, a function on a GPU),
# and a device function, not the kernel, tests the copy: a naive product on the simulator only.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect-sim: correctness=error
# adversarial-message-sim: binds FLAG and line 12 reads it
from numba import cuda, float32

TILE_WIDTH = 16
FLAG = 0
FLAG = cuda.compile_all
MODE = FLAG


@cuda.jit(device=True)
def on_simulator():
    return MODE == 0


@cuda.jit
def tiled_matmul(A, B, C):
    row, col = cuda.grid(2)
    n = A.shape[0]
    if on_simulator() and row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
