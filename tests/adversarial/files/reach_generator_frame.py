# adversarial: a kernel body (Python on the simulator) walks from a generator frame's f_back to
# the harness's frames and raises an exception that carries the request (every case's inputs),
# else one that lists the file system through the __import__ of the frame's f_builtins: the
# public case's message would show the hidden inputs.
# adversarial-exercise: tiled_matmul
# adversarial-message: attribute gi_frame
# kernelgrade-expect: correctness=error, concept=error
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    g = (g.gi_frame.f_back for i in range(1))
    frame = next(g)  # the kernel's own frame, read inside the running generator
    last = frame
    while frame is not None:
        if "request" in frame.f_locals:
            raise ValueError(frame.f_locals["request"])
        last = frame
        frame = frame.f_back
    importer = last.f_builtins["__import__"]
    raise ValueError(importer("os").listdir("/"))
