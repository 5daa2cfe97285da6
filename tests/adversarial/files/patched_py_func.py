# adversarial: a real (do-nothing) kernel whose py_func.__code__ is swapped afterwards for host
# code that computes the product, plus patched compile/launch entry points.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect: correctness=failed
import numpy as np
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    pass


def cheat(A, B, C):
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.blockIdx.x == 0 \
            and cuda.blockIdx.y == 0:
        C[:, :] = np.asarray(A) @ np.asarray(B)


tiled_matmul.py_func.__code__ = cheat.__code__
tiled_matmul.fn = cheat
setattr(tiled_matmul, "py_func", cheat)
