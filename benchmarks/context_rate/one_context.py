"""One process: cuInit, primary context, a small allocation; prints phase times (ms) as JSON."""
import ctypes, json, sys, time
t0 = time.monotonic()
cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r: raise SystemExit(f"{what} -> {r}")
ck(cu.cuInit(0), "cuInit"); t1 = time.monotonic()
dev = ctypes.c_int(); ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "get")
ctx = ctypes.c_void_p()
mode = sys.argv[1] if len(sys.argv) > 1 else "ctx"
if mode != "init":
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "retain"); t2 = time.monotonic()
    ck(cu.cuCtxSetCurrent(ctx), "set")
    p = ctypes.c_uint64(); ck(cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20), "alloc"); t3 = time.monotonic()
    if mode == "release":
        cu.cuMemFree_v2(p); cu.cuDevicePrimaryCtxRelease_v2(dev)
else:
    t2 = t3 = t1
bus = ctypes.create_string_buffer(32); cu.cuDeviceGetPCIBusId(bus, 32, dev)
t4 = time.monotonic()
print(json.dumps({"bus": bus.value.decode(), "start": t0, "init": (t1-t0)*1e3, "ctx": (t2-t1)*1e3, "alloc": (t3-t2)*1e3, "rel": (t4-t3)*1e3, "end": t4}))
