from numba import cuda
TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    i = 0
    while i >= 0:
        i = (i + 1) % 7
