# kernelgrade-expect-gpu: correctness=failed
"""No block waits for its departure: every block but the checker leaves as soon as it has
arrived and reads other blocks' elements before they are written. (Waits use ``<``, so a block
running ahead does not hang the checker: the results are wrong, not late.)"""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier_lockfree(arrive, depart, goal):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    cuda.syncthreads()
    if tid == 0:
        cuda.threadfence()
        cuda.atomic.exch(arrive, bid, goal)
    if bid == 0:
        if tid < cuda.gridDim.x:
            while cuda.atomic.add(arrive, tid, 0) < goal:
                pass
            cuda.threadfence()
        cuda.syncthreads()
        if tid < cuda.gridDim.x:
            cuda.threadfence()
            cuda.atomic.exch(depart, tid, goal)
    cuda.syncthreads()
