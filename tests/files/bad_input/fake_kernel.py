import numpy as np
TILE_WIDTH = 16


class Fake:
    """Not a kernel: computes C on the host when 'launched'."""
    def __getitem__(self, config):
        def run(A, B, C):
            C[:] = np.asarray(A) @ np.asarray(B)
        return run


tiled_matmul = Fake()
