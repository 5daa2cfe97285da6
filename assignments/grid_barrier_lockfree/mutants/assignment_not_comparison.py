# kernelgrade-expect-gpu: correctness=timeout
"""The article's ``if (tid_in_blk = 0)``: C assigns 0 and tests the value assigned, which is
false. In Python (Numba rejects ``if (tid := 0):``) that is ``tid = 0`` then ``if tid:``. No
block arrives, and every thread now has tid 0: the whole checker block waits for ``arrive[0]``,
which nobody writes."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier_lockfree(arrive, depart, goal):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    cuda.syncthreads()
    tid = 0  # C: if (tid_in_blk = 0)
    if tid:
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
    if tid == 0:
        while cuda.atomic.add(depart, bid, 0) < goal:
            pass
        cuda.threadfence()
    cuda.syncthreads()
