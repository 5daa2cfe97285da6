"""A kernel whose device function (and its divergent barrier) lives in another file."""
import importlib.util
from pathlib import Path

from numba import cuda, float32

_spec = importlib.util.spec_from_file_location("instrument_helper_device",
                                               Path(__file__).with_name("helper_device.py"))
_helper = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_helper)
stage = _helper.stage

BLOCK_SIZE = 32


@cuda.jit
def kernel(x, out):
    buf = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    stage(buf, tid, x[tid])
    out[tid] = buf[BLOCK_SIZE - 1 - tid]
