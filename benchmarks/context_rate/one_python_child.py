"""One process like a GPU child: NumPy and numba.cuda imported, a context, one kernel compiled
and launched. Prints the phase times (ms) as JSON under probe.py's names: ``init`` the imports,
``ctx`` the context, ``alloc`` the compile, ``rel`` the launch. ``osexit``: leave by os._exit."""
import json, os, sys, time
t0 = time.monotonic()
import numpy as np
from numba import cuda
t1 = time.monotonic()
cuda.current_context(); t2 = time.monotonic()
@cuda.jit("void(float32[:])")
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1
t3 = time.monotonic()
a = cuda.to_device(np.zeros(1024, np.float32)); k[4, 256](a); cuda.synchronize()
t4 = time.monotonic()
print(json.dumps({"start": t0, "init": (t1-t0)*1e3, "ctx": (t2-t1)*1e3, "alloc": (t3-t2)*1e3, "rel": (t4-t3)*1e3, "end": t4}))
if sys.argv[1:] == ["osexit"]:
    sys.stdout.flush(); os._exit(0)
