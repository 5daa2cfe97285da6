# adversarial: makes every NumPy comparison succeed (allclose, array_equal, isnan, norm,
# ndarray.__ne__) before a kernel that writes nothing.
# adversarial-exercise: tiled_matmul
# kernelgrade-expect: correctness=failed
import numpy as np
from numba import cuda
import numpy.linalg

TILE_WIDTH = 16
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.isnan = lambda x: np.zeros(np.shape(x), bool)
numpy.linalg.norm = lambda *a, **k: 0.0
np.testing.assert_allclose = lambda *a, **k: None
setattr(np, "isclose", lambda *a, **k: True)
vars(np)["any"] = lambda *a, **k: False
exec("np.ndarray.__ne__ = lambda a, b: np.zeros(np.shape(a), bool)")


@cuda.jit
def tiled_matmul(A, B, C):
    pass
