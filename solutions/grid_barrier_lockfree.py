"""Instructor solution for ``grid_barrier_lockfree`` (article on inter-block synchronization,
Xiao & Feng, lock-free barrier), with the article's two bugs fixed: thread 0 is picked with a
comparison (the article's ``if (tid_in_blk = 0)`` assigns, and is never true), and block 0 is
the checker (the article's block 1 does not exist on a one-block grid).

Contract: ``arrive``, ``depart``: int32 ``(gridDim.x,)``, zero before the launch; the j-th call
passes ``goal = j`` (j = 1, 2, …); 1-D grid and blocks, ``blockDim.x >= gridDim.x``. Raises
nothing; a block that never calls it deadlocks the grid.

Thread 0 of each block fences the block's writes and arrives; the checker's thread ``i`` waits
for block ``i`` and, after a block barrier, lets it depart; thread 0 of each block waits for its
departure, fences so the grid's writes are seen, and the block barrier holds the other threads.
Every wait reads with an atomic, so the compiler cannot hoist the load out of the loop (Numba
has no ``volatile``), and waits with ``<`` rather than the article's ``!=``: goals only grow.
"""

from numba import cuda


@cuda.jit(device=True)
def grid_barrier_lockfree(arrive, depart, goal):
    tid = cuda.threadIdx.x
    bid = cuda.blockIdx.x
    cuda.syncthreads()  # the block's writes of this phase are done
    if tid == 0:
        cuda.threadfence()  # ... and visible to the grid before the block arrives
        cuda.atomic.exch(arrive, bid, goal)
    if bid == 0:  # the checker block: thread i waits for block i
        if tid < cuda.gridDim.x:
            while cuda.atomic.add(arrive, tid, 0) < goal:
                pass
            cuda.threadfence()
        cuda.syncthreads()  # every block has arrived
        if tid < cuda.gridDim.x:
            cuda.threadfence()
            cuda.atomic.exch(depart, tid, goal)
    if tid == 0:
        while cuda.atomic.add(depart, bid, 0) < goal:
            pass
        cuda.threadfence()  # the grid's writes are seen from here on
    cuda.syncthreads()
