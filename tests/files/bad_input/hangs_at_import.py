from numba import cuda
TILE_WIDTH = 16
while True:
    pass
