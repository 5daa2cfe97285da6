# adversarial: a constant that takes hours to compute (the grader does evaluate constants).
# adversarial-exercise: tiled_matmul
# adversarial-limits: 8 8 20
# kernelgrade-expect: correctness=timeout
import math
from numba import cuda

TILE_WIDTH = 16
SLOW = math.factorial(10 ** 9)


@cuda.jit
def tiled_matmul(A, B, C):
    pass
