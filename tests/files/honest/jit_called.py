"""Honest block_sum whose kernel and device function are made by calling what ``cuda.jit(...)``
returns on a plain ``def`` (``cuda.jit(device=True)(_load)``, ``cuda.jit("void(...)")(_block_sum)``:
Numba's documented spelling of the decorator). The loader skipped those lines ("calling
`cuda.jit()` is not run"): 0 points (issue 30, red team g2)."""

from numba import cuda, float32

BLOCK_SIZE = 256


def _load(x, i):
    return x[i] if i < x.shape[0] else float32(0.0)


load = cuda.jit(device=True)(_load)


def _block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    sums[tid] = load(x, cuda.blockIdx.x * BLOCK_SIZE + tid)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]


block_sum = cuda.jit("void(float32[:], float32[:])")(_block_sum)
