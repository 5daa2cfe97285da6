# kernelgrade-expect: correctness=failed, concept=failed, shared-memory races=failed
"""The scan as a chain through global memory spelled with atomics: each thread reads its left
neighbour's output with ``cuda.atomic.add(out, i - 1, 0)`` and publishes its own with
``cuda.atomic.exch``, with no barrier and no wait between. On the simulator the threads run in
order, so every sum was exact; on a GPU a thread reads its neighbour's element before the
neighbour stored it. An atomic whose returned value is used reads the element: against another
thread's change of it, with no barrier between, it races as a load does (issue 30, goal 4)."""

from numba import cuda

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    if i < x.shape[0]:
        if tid == 0:
            cuda.atomic.exch(out, i, x[i])
        else:
            prev = cuda.atomic.add(out, i - 1, 0)
            cuda.atomic.exch(out, i, prev + x[i])
