# adversarial: monkeypatches cuda.synchronize, copy_to_host (simulator and GPU arrays) and
# cuda.to_device so that the output read back is the host product of the inputs seen so far.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect: correctness=failed
import numpy as np
from numba import cuda
import numba.cuda

TILE_WIDTH = 16
seen = []

_to_device = cuda.to_device


def to_device(a, *args, **kw):
    seen.append(np.array(a, copy=True))
    return _to_device(a, *args, **kw)


def copy_to_host(self, *args, **kw):
    A, B, C = seen[-3:]
    return C  # (a real cheat would place A @ B in C's guarded buffer here)


cuda.to_device = to_device
numba.cuda.synchronize = lambda *a, **k: None
try:
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    FakeCUDAArray.copy_to_host = copy_to_host
except ImportError:
    pass
try:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    DeviceNDArray.copy_to_host = copy_to_host
except ImportError:
    pass
globals()["cuda"].synchronize = None


@cuda.jit
def tiled_matmul(A, B, C):
    pass
