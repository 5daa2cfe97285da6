"""The instructor's ``block_sum`` kernel with its loop bounds read from ``cuda.blockDim`` at run time
instead of compile-time constants: a second timing reference (issue 22). Every student is timed
against the faster of it and ``solution.py`` on the GPU that measures, at the instructor's own
constants (issue 30; :func:`autograder.child.timing.choose_reference`). Same contract, launch and
results as ``solution.py``; never shown to a child."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
