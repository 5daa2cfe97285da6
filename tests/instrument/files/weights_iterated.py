"""y[i] = sum over j of w[j] * x[i + j], the weights read by iterating over the array (Numba's
GPU target compiles ``for j, m in enumerate(w)``), once from global memory and once from a
shared copy."""

from numba import cuda, float32

WIDTH = 5


@cuda.jit
def weighted(x, w, y):
    i = cuda.grid(1)
    if i < y.shape[0]:
        acc = float32(0.0)
        for j, m in enumerate(w):
            acc += m * x[i + j]
        y[i] = acc


@cuda.jit
def weighted_shared(x, w, y):
    ws = cuda.shared.array(WIDTH, float32)
    tid = cuda.threadIdx.x
    if tid < WIDTH:
        ws[tid] = w[tid]
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < y.shape[0]:
        acc = float32(0.0)
        for j, m in enumerate(ws):
            acc += m * x[i + j]
        y[i] = acc
