"""Honest block_sum with a declared signature and options that steer a GPU's code generation
only (``lineinfo``, ``max_registers``; ``forceinline`` on a device function): a GPU compiles it;
the simulator's ``cuda.jit`` refused the options (issue 30: "jit() got an unexpected keyword
argument 'lineinfo'")."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit(device=True, forceinline=True)
def load(x, i):
    return x[i] if i < x.shape[0] else float32(0.0)


@cuda.jit("void(float32[:], float32[:])", lineinfo=True, max_registers=64)
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = load(x, i)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
