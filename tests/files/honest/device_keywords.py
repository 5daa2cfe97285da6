"""Honest block_sum whose device functions are called with keyword arguments (and one defined
after the kernel): a GPU binds them to the parameters; the simulator's device-function call took
positional arguments only ("your kernel raised TypeError: ... unexpected keyword argument",
issue 30, red team g6b)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit(device=True)
def load(x, i):
    return x[i] if i < x.shape[0] else float32(0.0)


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    sums[tid] = load(i=cuda.blockIdx.x * BLOCK_SIZE + tid, x=x)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] = pair(sums, stride=stride, t=tid)
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]


@cuda.jit(device=True)
def pair(s, t, stride):
    return s[t] + s[t + stride]
