# adversarial: from inside the kernel body (Python on the simulator), find the harness's request
# in the main thread's frames, compute every case's answer on the host, write forged "case"
# records and "done" on the private channel, and exit before the real results go out.
# adversarial-exercise: tiled_matmul
# adversarial-message: attribute modules: frames, code objects
# kernelgrade-expect: correctness=error, concept=error
import numpy as np
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.blockIdx.x == 0 \
            and cuda.blockIdx.y == 0:
        import os
        import sys
        import threading

        harness = sys.modules["__main__"]
        from autograder.wire import buffers
        from autograder.wire import protocol

        frame = sys._current_frames()[threading.main_thread().ident]
        while frame is not None and "request" not in frame.f_locals:
            frame = frame.f_back
        request = frame.f_locals["request"]
        for case in request["cases"]:
            a, b = case["inputs"]["A"], case["inputs"]["B"]
            product = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
            buf, margin = buffers.guarded_output(product.shape, "float32")
            buf[margin:margin + product.size] = product.ravel()
            harness.send(protocol.CaseResult(case["id"], {"C": buf}))
        harness.send(protocol.Done())
        sys.stdout.flush()
        os._exit(0)
