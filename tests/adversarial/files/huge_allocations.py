# adversarial: huge host and "device" allocations, at the top level (64 GiB arrays, a 2^40-byte
# bytearray) and inside the kernel (a 2^31-element local array per thread, a device array).
# adversarial-exercise: tiled_matmul
# kernelgrade-expect: correctness=error
import numpy as np
from numba import cuda, float32

TILE_WIDTH = 16
HOST = np.zeros(1 << 34, np.float32)
BYTES = bytearray(1 << 40)
DEVICE = cuda.device_array(1 << 34, np.float32)
BIG = 1 << 31


@cuda.jit
def tiled_matmul(A, B, C):
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
        scratch = cuda.local.array(BIG, float32)
        for i in range(0, BIG, 4096):
            scratch[i] = A[0, 0]
        C[0, 0] = scratch[BIG - 4096]
