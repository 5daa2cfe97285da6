"""Instructor solution for ``block_scan`` (lesson "Day 11: Thread Synchronization").

x, out: int32 (n,), any n >= 1. Launch: block_scan[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, out).
out[i] = x[b*BLOCK_SIZE] + ... + x[i] for i in block b (inclusive scan of each block's segment).

Hillis-Steele in shared memory: log2(BLOCK_SIZE) steps; in each, every thread first reads the
value ``stride`` places to its left, then (after a barrier, so that no thread overwrites a value
another thread has yet to read) adds it to its own, then waits again before the next step.
The kernel reads BLOCK_SIZE at compile time only (no derived module-level constants), so the
grader may set the student's BLOCK_SIZE on this module before timing it.
"""

from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    scan[tid] = x[i] if i < n else int32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid >= stride else int32(0)
        cuda.syncthreads()  # every read of this step before any write
        scan[tid] += left
        cuda.syncthreads()  # every write of this step before the next step's reads
        stride *= 2
    if i < n:
        out[i] = scan[tid]
