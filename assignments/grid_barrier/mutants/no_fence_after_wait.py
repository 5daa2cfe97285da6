# kernelgrade-expect-gpu: concept=failed
"""The barrier fences before arriving but not after its wait: once the goal is reached, the block
may still read values other blocks wrote from its own stale cache lines (no acquire)."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
        cuda.threadfence()
        cuda.atomic.add(counter, 0, 1)
        while cuda.atomic.add(counter, 0, 0) < goal:
            pass
    cuda.syncthreads()
