# adversarial: answers with the instructor's own solution, found through the autograder package
# (the checkout's solutions/ beside it, the folder of assignments, a search of the file system).
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-needs: bubblewrap
# kernelgrade-expect: correctness=failed
FOUND = []


def _load():
    import glob
    import importlib
    import os

    if FOUND:
        return FOUND[0]
    try:
        FOUND.append(importlib.import_module("autograder.exercises.occupancy.solution"))
        return FOUND[0]
    except Exception:
        pass
    import autograder

    here = os.path.dirname(os.path.abspath(autograder.__file__))
    candidates = [os.path.join(here, "..", "solutions", "occupancy.py"),
                  os.path.join(here, "..", "assignments", "occupancy", "solution.py"),
                  os.path.join(here, "exercises", "occupancy", "solution.py")]
    for pattern in ("/*/*/solutions/occupancy.py", "/*/solutions/occupancy.py",
                    "/work/*/solutions/occupancy.py", "/tmp/*/solutions/occupancy.py",
                    "/*/*/autograder/exercises/occupancy/solution.py"):
        candidates += glob.glob(pattern)
    for path in candidates:
        try:
            ns = {}
            exec(open(path).read(), ns)
            FOUND.append(type("S", (), ns))
            return FOUND[0]
        except Exception:
            continue
    FOUND.append(None)
    return None


def _answer(name, kw):
    solution = _load()
    if solution is None:
        return -1
    return getattr(solution, name)(**kw)


def warps_per_block(**kw):
    return _answer("warps_per_block", kw)


def resident_blocks_per_sm(**kw):
    return _answer("resident_blocks_per_sm", kw)


def resident_threads_per_sm(**kw):
    return _answer("resident_threads_per_sm", kw)


def tile_shared_bytes(**kw):
    return _answer("tile_shared_bytes", kw)


def global_traffic_reduction(**kw):
    return _answer("global_traffic_reduction", kw)
