# kernelgrade-expect: correctness=failed
"""Thread 0 of every interior block first stores a wrong value into the first element of the
next block's outputs, which that block overwrites later with the right sum. On the simulator
blocks run in order, so the right value always won; on a GPU block b + 1 may store first and
its first output is then wrong: a write-after-write race between two blocks, with no fence
protocol. The analysed blocks include a drawn block's neighbours, so the pair is seen whichever
interior block the seed draws (issue 30, goals 1 and 4)."""

from numba import cuda, int32

BLOCK_SIZE = 32


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    nb = cuda.gridDim.x
    i = b * BLOCK_SIZE + tid
    n = x.shape[0]
    if tid == 0 and b >= 1 and b + 2 < nb:
        out[(b + 1) * BLOCK_SIZE] = int32(-1)
    scan[tid] = x[i] if i < n else int32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid >= stride else int32(0)
        cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    if i < n:
        out[i] = scan[tid]
