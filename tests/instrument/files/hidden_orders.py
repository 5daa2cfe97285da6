"""Kernels whose outputs are exact in the simulator's serial order and wrong in another
(issue 30, goals 1 and 4): the instrumented run must find each order dependence."""

from numba import cuda, float32, int32


@cuda.jit
def shared_last_writer(x, out):
    cnt = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    cnt[0] = tid + 1                  # every thread, a different value
    cuda.syncthreads()
    if tid == 0:
        out[cuda.blockIdx.x] = cnt[0]


@cuda.jit
def shared_same_value(x, out):
    flag = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    flag[0] = 1                       # every thread, one value
    cuda.syncthreads()
    if tid == 0:
        out[cuda.blockIdx.x] = flag[0]


@cuda.jit
def atomic_chain(x, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.threadIdx.x == 0:
        cuda.atomic.exch(out, i, x[i])
    else:
        prev = cuda.atomic.add(out, i - 1, 0)      # the read
        cuda.atomic.exch(out, i, prev + x[i])      # the neighbour's write


@cuda.jit
def atomic_sum_ignored(x, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    cuda.atomic.add(out, 0, x[i])


@cuda.jit
def atomic_ticket(x, out, counter):
    """Each thread takes a ticket (the old value, used) from one counter: the tickets differ
    in every order, and each thread writes its own slot: no output depends on the order."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = cuda.atomic.add(counter, 0, 1)
    out[i] = x[i] + float32(0.0) * t


@cuda.jit
def atomic_chain_fenced(x, out):
    """The chain across blocks: thread 0 of block b reads block b - 1's last element with an
    atomic that block b - 1 stored with an exch, no fence before it (no release)."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.threadIdx.x == 0 and i > 0:
        prev = cuda.atomic.add(out, i - 1, 0)
        cuda.atomic.exch(out, i, prev + x[i])
    elif cuda.threadIdx.x == cuda.blockDim.x - 1:
        cuda.atomic.exch(out, i, x[i])


@cuda.jit
def lock_protected_total(x, total, lock):
    """Thread 0 of each block adds the block's first element to a total under a lock taken with
    compare-and-swap, fenced on both sides (a critical section): no race."""
    if cuda.threadIdx.x == 0:
        while cuda.atomic.compare_and_swap(lock, 0, 1) != 0:
            pass
        cuda.threadfence()
        total[0] = total[0] + x[cuda.blockIdx.x * cuda.blockDim.x]
        cuda.threadfence()
        cuda.atomic.exch(lock, 0, 0)
