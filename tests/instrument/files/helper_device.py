"""A device function in a file of its own, for kernel_uses_helper.py."""
from numba import cuda


@cuda.jit(device=True)
def stage(buf, tid, value):
    buf[tid] = value
    if tid < 16:
        cuda.syncthreads()
