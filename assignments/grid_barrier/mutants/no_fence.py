# kernelgrade-expect-gpu: concept=failed
"""The article's barrier without __threadfence(): arrivals are not ordered after the block's writes."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(counter, 0, 1)
        while cuda.atomic.add(counter, 0, 0) < goal:
            pass
    cuda.syncthreads()
