"""A grid barrier between two phases, with a goal the simulator's serial order can reach: block b
waits until blocks 0..b have arrived (the exercise's goal is every block, which a grid run one
block after another never reaches). Phase 2 reads what the previous block stored in phase 1.
``barrier`` is set by the test to the device function under test."""
from numba import cuda

barrier = None


@cuda.jit
def phases(x, out, counter):
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[b * n + t] = x[b * n + t] * 2  # phase 1
    barrier(counter, b + 1)
    if b > 0:
        x[b * n + t] = out[(b - 1) * n + t]  # phase 2


@cuda.jit
def phases_one_block(x, out, arrive, depart):
    """One block, the lock-free barrier between two phases: phase 2 reads another thread's
    phase-1 element."""
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    out[t] = x[t] * 2  # phase 1
    barrier(arrive, depart, 1)
    x[t] = out[(t + 1) % n]  # phase 2
