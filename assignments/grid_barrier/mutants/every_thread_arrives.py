# kernelgrade-expect-gpu: correctness=timeout
"""Every thread adds 1, so the counter overshoots the goal and `!=` never lets anyone through."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    cuda.threadfence()
    cuda.atomic.add(counter, 0, 1)
    while cuda.atomic.add(counter, 0, 0) != goal:
        pass
    cuda.syncthreads()
