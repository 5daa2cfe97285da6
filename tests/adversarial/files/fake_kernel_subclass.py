# adversarial: a subclass of the simulator's FakeCUDAKernel (and of CUDADispatcher) whose launch
# computes C = A @ B with NumPy, wrapping a function defined in this file.
# adversarial-exercise: tiled_matmul
# adversarial-message: not run by the grader
# kernelgrade-expect: correctness=error
import numpy as np
from numba import cuda

TILE_WIDTH = 16

try:
    from numba.cuda.simulator.kernel import FakeCUDAKernel as Base
except ImportError:
    from numba.cuda.dispatcher import CUDADispatcher as Base


def tiled_matmul_py(A, B, C):
    pass


class Cheat(Base):
    def __getitem__(self, config):
        def run(A, B, C):
            C.copy_to_device(A.copy_to_host() @ B.copy_to_host())
        return run


tiled_matmul = Cheat(tiled_matmul_py, device=False)
