# kernelgrade-expect: correctness=failed, concept=failed, shared-memory races=failed
"""The scan as a chain through global memory: ``out[i] = out[i - 1] + x[i]``, each thread reading
the element its left neighbour wrote in the same barrier interval. The simulator runs a block's
threads one at a time in order, so every sum was exact there; on a GPU the threads of a warp
read their neighbours' elements before anyone wrote them. A shared array and its barriers are
decoys. A read-after-write race in global memory decides every case as a shared-memory race
does (issue 30)."""

from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    decoy = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    decoy[tid] = tid
    cuda.syncthreads()
    mirrored = decoy[BLOCK_SIZE - 1 - tid]
    if i < n:
        if tid == 0:
            out[i] = x[i]
        else:
            out[i] = out[i - 1] + x[i]
    cuda.syncthreads()
    decoy[tid] = mirrored
