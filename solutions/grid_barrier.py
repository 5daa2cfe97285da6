"""Instructor solution for ``grid_barrier`` (article on inter-block synchronization, lock-based).

``counter``: int32 (1,), zero before the launch; the j-th call passes ``goal = j * gridDim.x``.
Thread 0 of each block fences its block's writes, arrives with an atomic add and spins (atomic
reads, so the compiler cannot hoist the load) until every block has arrived; the block barrier
then holds the other threads, and the fence orders the reads that follow.
"""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier(counter, goal):
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
        cuda.threadfence()
        cuda.atomic.add(counter, 0, 1)
        while cuda.atomic.add(counter, 0, 0) < goal:
            pass
        cuda.threadfence()
    cuda.syncthreads()
