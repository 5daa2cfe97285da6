"""Honest block_sum whose arithmetic goes through numba-cuda's libdevice bindings
(``libdevice.fmaf``, ``fadd_rn``; a GPU compiles them to ``__nv_fmaf`` and ``__nv_fadd_rn``). The
simulator's libdevice functions were documentation stubs returning None, so the sums were NaN
and the kernel was told its outputs were wrong (issue 30, red team g7)."""

from numba import cuda, float32
from numba.cuda import libdevice
from numba.cuda.libdevice import fadd_rn

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    v = x[i] if i < x.shape[0] else float32(0.0)
    sums[tid] = libdevice.fmaf(v, float32(1.0), float32(0.0))
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] = fadd_rn(sums[tid], sums[tid + stride])
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
