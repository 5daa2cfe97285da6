# kernelgrade-expect-gpu: correctness=timeout
"""Spins on a plain load of counter[0]: without an atomic (or volatile) read the compiler may
read it once, so the loop never sees the other blocks arrive."""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(counter, 0, 1)
        while counter[0] < goal:
            pass
        cuda.threadfence()
    cuda.syncthreads()
