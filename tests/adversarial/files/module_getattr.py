# adversarial: a module-level __getattr__ that hands the grader whatever it asks for, and a
# __class__ swap of the module.
# adversarial-exercise: tiled_matmul
# adversarial-message: does not define
# kernelgrade-expect: correctness=error
import types
from numba import cuda


@cuda.jit
def _real(A, B, C):
    pass


def __getattr__(name):
    return 16 if name == "TILE_WIDTH" else _real


__class__ = types.ModuleType
