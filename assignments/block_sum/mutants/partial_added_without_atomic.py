# kernelgrade-expect: correctness=failed, concept=failed, shared-memory races=failed
"""Every thread adds its element to ``partial[b]`` with a plain ``+=`` (a load, an add, a store),
after thread 0 zeroed it. The simulator runs a block's threads one at a time, so every sum was
exact there; on a GPU the loads and stores of a warp interleave and most additions are lost. A
tree over a shared decoy keeps the barriers. A race in global memory decides every case as a
shared-memory race does (issue 30)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    decoy = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    i = b * BLOCK_SIZE + tid
    decoy[tid] = float32(1.0)
    if tid == 0:
        partial[b] = float32(0.0)
    cuda.syncthreads()
    if i < x.shape[0]:
        partial[b] += x[i]
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            decoy[tid] += decoy[tid + stride]
        cuda.syncthreads()
        stride //= 2
