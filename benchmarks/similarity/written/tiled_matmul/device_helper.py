"""Honest tiled matmul written for the benchmark: a device function loads a tile."""
from numba import cuda, float32

TILE_WIDTH = 32


@cuda.jit(device=True)
def load_tile(src, tile, i, j, size, ty, tx):
    value = float32(0.0)
    if i < size and j < size:
        value = src[i, j]
    tile[ty, tx] = value


@cuda.jit
def tiled_matmul(A, B, C):
    ta = cuda.shared.array(shape=(TILE_WIDTH, TILE_WIDTH), dtype=float32)
    tb = cuda.shared.array(shape=(TILE_WIDTH, TILE_WIDTH), dtype=float32)
    x, y = cuda.grid(2)
    lx, ly = cuda.threadIdx.x, cuda.threadIdx.y
    size = A.shape[1]
    out = float32(0.0)
    for base in range(0, size, TILE_WIDTH):
        load_tile(A, ta, y, base + lx, size, ly, lx)
        load_tile(B, tb, base + ly, x, size, ly, lx)
        cuda.syncthreads()
        for kk in range(TILE_WIDTH):
            out += ta[ly, kk] * tb[kk, lx]
        cuda.syncthreads()
    if y < size and x < size:
        C[y, x] = out
