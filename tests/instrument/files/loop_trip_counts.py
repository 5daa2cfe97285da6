"""Two loops: one whose trip count differs between the lanes of every warp, one uniform."""
from numba import cuda


@cuda.jit
def kernel(out):
    tid = cuda.threadIdx.x
    acc = 0
    for k in range(tid % 4):
        acc += k
    for k in range(8):
        acc += k
    out[tid] = acc
