# kernelgrade-expect-gpu: correctness=failed
"""Only thread 0 waits: the block's other threads run into the next phase before the grid arrives."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(counter, 0, 1)
        while cuda.atomic.add(counter, 0, 0) < goal:
            pass
        cuda.threadfence()
