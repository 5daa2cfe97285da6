"""Tiled transpose through a 32x32 shared tile, read back along its columns: the 32 lanes of a
warp read 32 words 128 bytes apart, all in one bank."""
from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8


@cuda.jit
def transpose(odata, idata):
    tile = cuda.shared.array((TILE_DIM, TILE_DIM), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE_DIM + tx
    y = cuda.blockIdx.y * TILE_DIM + ty
    height, width = idata.shape
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        if x < width and y + j < height:
            tile[ty + j, tx] = idata[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE_DIM + tx
    y = cuda.blockIdx.x * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        if x < height and y + j < width:
            odata[y + j, x] = tile[tx, ty + j]
