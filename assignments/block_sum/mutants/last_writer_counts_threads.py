# kernelgrade-expect: correctness=failed, concept=failed, shared-memory races=failed
"""Every thread that holds an element stores ``tid + 1`` into one shared counter, and the tree
pads with zero every slot at or past the counter ("the last thread wins" counts a block's valid
threads). The stores put different values in one element between two barriers: on the simulator
the threads run in order, so the last valid thread always won and every sum was exact; on a GPU
any of them may win and the sums lose elements. A write-after-write race of different values
decides every case as any other race does (issue 30, goal 4)."""

from numba import cuda, float32, int32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    count = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    if i < x.shape[0]:
        count[0] = tid + 1
    cuda.syncthreads()
    sums[tid] = x[i] if tid < count[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
