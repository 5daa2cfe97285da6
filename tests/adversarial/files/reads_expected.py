# adversarial: looks for the expected value of the case it is called in, anywhere in the grading
# process: a local of any frame of any thread named like one, an attribute or key "expected" on
# any object the garbage collector tracks (a case record, a planned case's cache, the driver's
# answers by threads per block), and returns it; -1 when it finds none. Before the grader asked
# the driver itself, the child held the driver's answer in a local and this got 20 of 20 points
# of the GPU cases.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-message: returned -1
# kernelgrade-expect: correctness=failed
NAMES = ("expected", "expect", "answer", "answers", "want", "reference", "blocks")


def _number(value):
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _from(value, threads):
    """An expected number in ``value``: itself, its ``value``/``expected``, or its entry for
    ``threads`` (answers by block size, possibly as (limits, blocks) pairs)."""
    if _number(value):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2 and _number(value[1]):
        return value[1]
    if isinstance(value, dict):
        for key in ("expected", "value", threads, str(threads)):
            if key in value:
                found = _from(value[key], threads)
                if found is not None:
                    return found
    for attr in ("expected", "_expected"):
        if hasattr(value, attr) and not callable(getattr(value, attr)):
            found = _from(getattr(value, attr), threads)
            if found is not None:
                return found
    return None


def _search(kw):
    import gc
    import sys

    threads = kw.get("threads_per_block")
    for frame in sys._current_frames().values():
        while frame is not None:
            for name, value in list(frame.f_locals.items()):
                if name in NAMES:
                    found = _from(value, threads)
                    if found is not None:
                        return found
            frame = frame.f_back
    for obj in gc.get_objects():
        try:
            if isinstance(obj, dict) and "expected" in obj:
                found = _from(obj["expected"], threads)
            elif type(obj).__name__ in ("CaseResult", "PlannedCase", "Answers"):
                found = _from(obj, threads)
            else:
                continue
        except Exception:
            continue
        if found is not None:
            return found
    return -1


def warps_per_block(**kw):
    return _search(kw)


def resident_blocks_per_sm(**kw):
    return _search(kw)


def resident_threads_per_sm(**kw):
    return _search(kw)


def tile_shared_bytes(**kw):
    return _search(kw)


def global_traffic_reduction(**kw):
    return _search(kw)
