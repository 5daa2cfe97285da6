# kernelgrade-expect-gpu: correctness=timeout
"""The article's spins on plain loads (its arrays are ``volatile``; Numba has no volatile): the
compiler may read ``arrive[tid]`` and ``depart[bid]`` once, before the loop, so a block that
was not released at its first look waits forever."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier_lockfree(arrive, depart, goal):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    cuda.syncthreads()
    if tid == 0:
        cuda.threadfence()
        arrive[bid] = goal
    if bid == 0:
        if tid < cuda.gridDim.x:
            while arrive[tid] != goal:
                pass
            cuda.threadfence()
        cuda.syncthreads()
        if tid < cuda.gridDim.x:
            cuda.threadfence()
            depart[tid] = goal
    if tid == 0:
        while depart[bid] != goal:
            pass
        cuda.threadfence()
    cuda.syncthreads()
