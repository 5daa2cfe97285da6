"""Kernels whose outputs are made in different ways from the same loads (issue 30)."""
import math

from numba import cuda, float32

T = 8


@cuda.jit
def neighbour_sum(x, y):
    """y[i] = x[i - 1] + x[i] + x[i + 1] within a block, the neighbours through a shared tile."""
    tile = cuda.shared.array(T, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * T + t
    tile[t] = x[i]
    cuda.syncthreads()
    acc = tile[t]
    if t > 0:
        acc += tile[t - 1]
    if t < T - 1:
        acc += tile[t + 1]
    y[i] = acc


@cuda.jit
def neighbour_sum_from_global(x, y):
    """The same sums from global memory; the tile is loaded, read once and ignored."""
    tile = cuda.shared.array(T, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * T + t
    tile[t] = x[i]
    cuda.syncthreads()
    seen = tile[(t + 1) % T]
    acc = x[i]
    if t > 0:
        acc += x[i - 1]
    if t < T - 1:
        acc += x[i + 1]
    y[i] = acc + seen * float32(0.0) if seen != seen else acc


@cuda.jit
def through_local_and_math(x, y):
    """The tile's neighbours kept in a local array, a cast and a math function on the way."""
    tile = cuda.shared.array(T, float32)
    regs = cuda.local.array(2, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * T + t
    tile[t] = x[i]
    cuda.syncthreads()
    regs[0] = tile[(t + 1) % T]
    regs[1] = tile[(t + 2) % T]
    y[i] = float32(math.sqrt(regs[0] * regs[0] + regs[1] * regs[1]))


@cuda.jit
def serial_then_handed_over(x, y):
    """Thread 0 sums the block's elements straight from global memory, one after another, and
    hands the total to thread 1 through shared memory, which stores it."""
    box = cuda.shared.array(1, float32)
    t = cuda.threadIdx.x
    if t == 0:
        acc = float32(0.0)
        for k in range(T):
            acc += x[cuda.blockIdx.x * T + k]
        box[0] = acc
    cuda.syncthreads()
    if t == 1:
        y[cuda.blockIdx.x] = box[0]


@cuda.jit
def tree(x, y):
    """The same sum as a tree in shared memory."""
    s = cuda.shared.array(T, float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.blockIdx.x * T + t]
    cuda.syncthreads()
    stride = T // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        y[cuda.blockIdx.x] = s[0]


@cuda.jit
def loads_by_other_means(x, y):
    """Reads x through an atomic that changes nothing and through a method of a view."""
    i = cuda.threadIdx.x
    a = cuda.atomic.add(x, i, float32(0.0))
    y[i] = a + x[i:i + 2].sum()


@cuda.jit
def stencil_no_halo(a, b):
    """A 2-D 5-point stencil whose (T + 2) x (T + 2) tile gets its interior only: the halo it
    reads was never written in this launch."""
    tile = cuda.shared.array((T + 2, T + 2), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    tile[ty + 1, tx + 1] = a[row, col]
    cuda.syncthreads()
    up_down = tile[ty, tx + 1] + tile[ty + 2, tx + 1]  # the stencil
    sides = tile[ty + 1, tx] + tile[ty + 1, tx + 2]  # its other half
    b[row, col] = up_down + sides - 4 * tile[ty + 1, tx + 1]


@cuda.jit
def stencil_1d_with_halo(x, y):
    """A 1-D 3-point stencil whose T + 2 tile is loaded whole: the interior by every thread, the
    halo by the first and last thread of the block (zero past the array's ends)."""
    tile = cuda.shared.array(T + 2, float32)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * T + tx
    tile[tx + 1] = x[i] if i < x.size else 0.0
    if tx == 0:
        tile[0] = x[i - 1] if i >= 1 else 0.0
    if tx == T - 1:
        tile[T + 1] = x[i + 1] if i + 1 < x.size else 0.0
    cuda.syncthreads()
    if i < y.size:
        y[i] = tile[tx] + tile[tx + 1] + tile[tx + 2]
