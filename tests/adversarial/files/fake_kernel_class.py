# adversarial: a class whose [grid, block](A, B, C) computes C = A @ B on the host.
# adversarial-exercise: tiled_matmul
# adversarial-message: not run by the grader
# kernelgrade-expect: correctness=error
import numpy as np
from numba import cuda

TILE_WIDTH = 16


class HostMatmul:
    def __getitem__(self, config):
        def run(A, B, C):
            C[:, :] = np.asarray(A) @ np.asarray(B)
        return run


tiled_matmul = HostMatmul()
