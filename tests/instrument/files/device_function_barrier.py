"""A device function holding the barrier and the branch: lines inside it are reported."""
from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit(device=True)
def stage(buf, tid, value):
    if tid % 2 == 0:
        buf[tid] = value
        cuda.syncthreads()


@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    stage(buf, tid, x[tid])
    out[tid] = buf[tid]
