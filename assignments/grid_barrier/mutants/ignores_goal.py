# kernelgrade-expect-gpu: correctness=failed
"""Waits for gridDim.x arrivals on every call: only the first barrier holds."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(counter, 0, 1)
        while cuda.atomic.add(counter, 0, 0) < cuda.gridDim.x:
            pass
        cuda.threadfence()
    cuda.syncthreads()
