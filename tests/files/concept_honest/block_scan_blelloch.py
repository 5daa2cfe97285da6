# concept-exercise: block_scan
"""Honest: a work-efficient (Blelloch) scan, up-sweep then down-sweep; its busiest thread reads
shared memory about 2.5 times as often as the instructor's Hillis-Steele."""
from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    s = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    s[tid] = x[i] if i < n else int32(0)
    cuda.syncthreads()
    offset = 1
    d = BLOCK_SIZE // 2
    while d > 0:
        if tid < d:
            ai = offset * (2 * tid + 1) - 1
            bi = offset * (2 * tid + 2) - 1
            s[bi] += s[ai]
        offset *= 2
        d //= 2
        cuda.syncthreads()
    last = s[BLOCK_SIZE - 1]
    cuda.syncthreads()
    if tid == 0:
        s[BLOCK_SIZE - 1] = 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK_SIZE:
        offset //= 2
        if tid < d:
            ai = offset * (2 * tid + 1) - 1
            bi = offset * (2 * tid + 2) - 1
            t = s[ai]
            s[ai] = s[bi]
            s[bi] += t
        d *= 2
        cuda.syncthreads()
    if i < n:
        v = s[tid + 1] if tid + 1 < BLOCK_SIZE else last
        out[i] = v
