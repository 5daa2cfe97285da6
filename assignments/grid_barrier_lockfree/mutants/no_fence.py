# kernelgrade-expect-gpu: concept=failed
"""No ``cuda.threadfence()``: a block's arrival is not ordered after its writes, nor its reads
after its departure."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier_lockfree(arrive, depart, goal):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    cuda.syncthreads()
    if tid == 0:
        cuda.atomic.exch(arrive, bid, goal)
    if bid == 0:
        if tid < cuda.gridDim.x:
            while cuda.atomic.add(arrive, tid, 0) < goal:
                pass
        cuda.syncthreads()
        if tid < cuda.gridDim.x:
            cuda.atomic.exch(depart, tid, goal)
    if tid == 0:
        while cuda.atomic.add(depart, bid, 0) < goal:
            pass
    cuda.syncthreads()
