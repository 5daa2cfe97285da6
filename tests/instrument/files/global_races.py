"""Kernels whose threads (or blocks) meet in global memory: races, and their fixed forms."""
from numba import cuda, float32


@cuda.jit
def chain(x, out):
    """out[i] = out[i - 1] + x[i] within a block, no barrier: a read-after-write race."""
    i = cuda.threadIdx.x
    if i == 0:
        out[i] = x[i]
    else:
        out[i] = out[i - 1] + x[i]  # the chain


@cuda.jit
def chain_with_barrier(x, out):
    """Each thread writes its element, then (after a barrier) reads its neighbour's."""
    i = cuda.threadIdx.x
    out[i] = x[i]
    cuda.syncthreads()
    left = out[i - 1] if i > 0 else float32(0.0)
    cuda.syncthreads()
    out[i] += left


@cuda.jit
def plain_sum(x, partial):
    """partial[b] += x[i] by every thread, without an atomic."""
    b = cuda.blockIdx.x
    i = b * cuda.blockDim.x + cuda.threadIdx.x
    partial[b] += x[i]  # plain


@cuda.jit
def atomic_sum(x, partial):
    b = cuda.blockIdx.x
    i = b * cuda.blockDim.x + cuda.threadIdx.x
    cuda.atomic.add(partial, b, x[i])


@cuda.jit
def same_value(x, out):
    """Every thread of every block stores x[0] to out[0]: one value, whatever the order."""
    out[0] = x[0]  # one value


@cuda.jit
def last_writer_wins(x, out):
    """Every thread stores its own x[i] to out[0]: the simulator's last thread wins."""
    i = cuda.grid(1)
    out[0] = x[i]  # its own value


@cuda.jit
def neighbour_block(x, out, flag):
    """Block b stores its elements, then reads block b - 1's: no fence protocol."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[b * n + t] = x[b * n + t]  # own
    cuda.syncthreads()
    if b > 0:
        x[b * n + t] += out[(b - 1) * n + t]  # neighbour


@cuda.jit
def flag_handoff(x, out, flag):
    """Block b - 1 stores, syncs, thread 0 fences and raises flag[b - 1] with an atomic; block b's
    thread 0 waits for it with an atomic, fences, and the block syncs before reading."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[b * n + t] = x[b * n + t]  # own
    cuda.syncthreads()
    if t == 0:
        cuda.threadfence()  # release
        cuda.atomic.exch(flag, b, 1)
        if b > 0:
            while cuda.atomic.add(flag, b - 1, 0) == 0:
                pass
            cuda.threadfence()  # acquire
    cuda.syncthreads()
    if b > 0:
        x[b * n + t] += out[(b - 1) * n + t]  # neighbour


@cuda.jit
def flag_handoff_no_release_fence(x, out, flag):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[b * n + t] = x[b * n + t]  # own
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.exch(flag, b, 1)
        if b > 0:
            while cuda.atomic.add(flag, b - 1, 0) == 0:
                pass
            cuda.threadfence()
    cuda.syncthreads()
    if b > 0:
        x[b * n + t] += out[(b - 1) * n + t]  # neighbour


@cuda.jit
def flag_handoff_no_acquire_fence(x, out, flag):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[b * n + t] = x[b * n + t]  # own
    cuda.syncthreads()
    if t == 0:
        cuda.threadfence()
        cuda.atomic.exch(flag, b, 1)
        if b > 0:
            while cuda.atomic.add(flag, b - 1, 0) == 0:
                pass
    cuda.syncthreads()
    if b > 0:
        x[b * n + t] += out[(b - 1) * n + t]  # neighbour


@cuda.jit
def flag_handoff_plain_spin(x, out, flag):
    """The wait reads the flag with a plain load: it races with the atomic that raised it."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[b * n + t] = x[b * n + t]  # own
    cuda.syncthreads()
    if t == 0:
        cuda.threadfence()
        cuda.atomic.exch(flag, b, 1)
        if b > 0:
            while flag[b - 1] == 0:  # plain spin
                pass
            cuda.threadfence()
    cuda.syncthreads()
    if b > 0:
        x[b * n + t] += out[(b - 1) * n + t]  # neighbour


@cuda.jit
def last_block_sums(x, partial, count, total):
    """The threadfence reduction: each block stores its sum, fences and takes a ticket; the
    block that takes the last ticket fences and adds every block's sum."""
    b = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:
        partial[b] = x[b]  # own
        cuda.threadfence()
        ticket = cuda.atomic.add(count, 0, 1)
        if ticket == cuda.gridDim.x - 1:
            cuda.threadfence()
            s = float32(0.0)
            for k in range(cuda.gridDim.x):
                s += partial[k]  # every block's
            total[0] = s
