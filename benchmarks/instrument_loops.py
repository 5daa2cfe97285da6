"""Kernels for ``instrument_overhead.py`` that stress the hooks: long loops of global or
shared loads, where a plain simulator run has little thread switching to pay for."""

from numba import cuda, float32

N_SHARED = 256


@cuda.jit
def dot(a, b, out):
    i = cuda.grid(1)
    acc = float32(0.0)
    for k in range(a.shape[0]):
        acc += a[k] * b[k]
    out[i] = acc


@cuda.jit
def shared_dot(a, out):
    s = cuda.shared.array(N_SHARED, float32)
    i = cuda.threadIdx.x
    s[i] = a[i]
    cuda.syncthreads()
    acc = float32(0.0)
    for k in range(N_SHARED):
        acc += s[k] * s[(k + i) % N_SHARED]
    out[i] = acc
