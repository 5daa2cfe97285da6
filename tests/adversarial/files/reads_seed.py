# adversarial: looks for the grader's secret seed (the test suite's, see conftest) in its own and
# every visible process's environment and command line, in its open files and in the harness's
# memory (the request); answers 1001 when it finds it, 1000 when not.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-message: returned 1000
# kernelgrade-expect: correctness=failed
SEED = "2026" + "1122"  # never literally in this file, which the child holds


def _found():
    import os
    import pickle
    import sys
    import threading

    blobs = [repr(dict(os.environ)).encode()]
    for pid in [p for p in os.listdir("/proc") if p.isdigit()] + ["self"]:
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    blobs.append(f.read())
            except OSError:
                pass
    for fd in os.listdir("/proc/self/fd"):
        try:
            blobs.append(os.pread(int(fd), 1 << 20, 0))
        except OSError:
            pass
    frame = sys._current_frames()[threading.main_thread().ident]
    while frame is not None:
        for value in frame.f_locals.values():
            try:
                blobs.append(pickle.dumps(value))
                blobs.append(repr(value).encode())
            except Exception:
                pass
        frame = frame.f_back
    return any(SEED.encode() in b for b in blobs)


def answer(**kw):
    return 1001 if _found() else 1000


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
