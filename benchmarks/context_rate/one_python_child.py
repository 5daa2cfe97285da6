"""One process like a GPU child: NumPy and numba.cuda imported, a context, one kernel compiled
and launched. Prints the phase times (ms) as JSON under probe.py's names: ``init`` the imports,
``ctx`` the context, ``alloc`` the compile, ``rel`` the launch. ``osexit``: leave by os._exit.
``zygote.py`` imports :func:`gpu_work` from here."""
import json, os, sys, time
t0 = time.monotonic()
import numpy as np
from numba import cuda
t1 = time.monotonic()


def gpu_work() -> tuple[float, float, float]:
    """A context, one small kernel compiled, one launch: the seconds of each."""
    a0 = time.monotonic()
    cuda.current_context()
    a1 = time.monotonic()

    @cuda.jit("void(float32[:])")
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1
    a2 = time.monotonic()
    a = cuda.to_device(np.zeros(1024, np.float32)); k[4, 256](a); cuda.synchronize()
    return a1 - a0, a2 - a1, time.monotonic() - a2


if __name__ == "__main__":
    ctx, compiled, launched = gpu_work()
    print(json.dumps({"start": t0, "init": (t1 - t0) * 1e3, "ctx": ctx * 1e3,
                      "alloc": compiled * 1e3, "rel": launched * 1e3, "end": time.monotonic()}))
    if sys.argv[1:] == ["osexit"]:
        sys.stdout.flush(); os._exit(0)
