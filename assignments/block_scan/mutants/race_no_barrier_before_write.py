# kernelgrade-expect: correctness=failed, diagnostic: shared-memory races=failed
"""Hillis-Steele without the barrier between a step's read and its write: a thread can add a
neighbour's value that the neighbour has already updated in this step (a read-after-write race
across warps on a GPU; any thread order on the simulator)."""

from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    scan[tid] = x[i] if i < x.shape[0] else int32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        if tid >= stride:
            scan[tid] += scan[tid - stride]
        cuda.syncthreads()
        stride *= 2
    if i < x.shape[0]:
        out[i] = scan[tid]
