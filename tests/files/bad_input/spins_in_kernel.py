from numba import cuda
TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    # Inputs lie in [-1, 1): this never ends, and its writes keep the compiler from removing it.
    while A[0, 0] < 10.0:
        C[0, 0] += 1.0
