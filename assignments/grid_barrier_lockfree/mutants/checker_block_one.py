# kernelgrade-expect-gpu: correctness=timeout
"""The article's checker, block 1: right on any grid of two blocks or more, but a one-block grid
has no block 1, so block 0 waits for its departure forever."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier_lockfree(arrive, depart, goal):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    cuda.syncthreads()
    if tid == 0:
        cuda.threadfence()
        cuda.atomic.exch(arrive, bid, goal)
    if bid == 1:
        if tid < cuda.gridDim.x:
            while cuda.atomic.add(arrive, tid, 0) < goal:
                pass
            cuda.threadfence()
        cuda.syncthreads()
        if tid < cuda.gridDim.x:
            cuda.threadfence()
            cuda.atomic.exch(depart, tid, goal)
    if tid == 0:
        while cuda.atomic.add(depart, bid, 0) < goal:
            pass
        cuda.threadfence()
    cuda.syncthreads()
