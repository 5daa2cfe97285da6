"""Per-block histogram in shared memory with atomics (no race), then one plain read-modify-write
(a race): every thread adds into bins[0] without an atomic."""
from numba import cuda, int32

NBINS = 8


@cuda.jit
def histogram(x, hist):
    bins = cuda.shared.array(NBINS, int32)
    tid = cuda.threadIdx.x
    if tid < NBINS:
        bins[tid] = 0
    cuda.syncthreads()
    cuda.atomic.add(bins, x[tid] % NBINS, 1)
    cuda.syncthreads()
    if tid < NBINS:
        cuda.atomic.add(hist, tid, bins[tid])
    cuda.syncthreads()
    bins[0] += 1
