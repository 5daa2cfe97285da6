"""The concept test's second half: shared memory and barriers *used*, from the counts of the
instrumented run (:mod:`autograder.instrument`, ``global_loads`` and ``shared_use``), judged
against an exercise's :class:`autograder.exercises.base.Use` bounds.

The counts come from the child (what the student's kernel did); the bounds are computed here,
from the instructor's counts at the same case and constants. Pure: a function of the exercise
and the report.
"""

from __future__ import annotations

from autograder.exercises.base import Exercise, Use

NO_REPORT = ("the instrumented run gave no counts, so the use of shared memory and barriers "
             "could not be checked")


def at(exercise: Exercise, report: dict) -> dict:
    """The instrumented run's case parameters (``report["params"]``: a graded case's) with the
    submission's constants (``report["constants"]``, ints only) added: what the :class:`Use`
    functions take."""
    consts = report.get("constants")
    consts = {k: v for k, v in consts.items() if isinstance(k, str) and type(v) is int} \
        if isinstance(consts, dict) else {}
    params = report.get("params") if isinstance(report.get("params"), dict) else {}
    return {**params, **consts}


def _count(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def measured(exercise: Exercise, report: dict) -> dict:
    """What the report says of the kernel, in the units of :class:`Use`: ``outputs`` (elements
    written), ``loads_per_output`` (of the ``tiled`` arrays), ``shared_reads_per_output``
    (cross-thread), ``reads_by_one_thread``, ``ordering_barriers`` (lines) and
    ``outputs_from_shared`` (fraction). A count the report lacks is None."""
    use = exercise.concept.use
    loads = report.get("global_loads") if isinstance(report.get("global_loads"), dict) else {}
    shared = report.get("shared_use") if isinstance(report.get("shared_use"), dict) else {}
    written = loads.get("outputs_written")
    outputs = sum(v for v in written.values() if _count(v) is not None) \
        if isinstance(written, dict) else 0
    by_array = loads.get("by_array") if isinstance(loads.get("by_array"), dict) else {}
    tiled = sum(_count(by_array.get(a)) or 0.0 for a in use.tiled)
    cross = _count(shared.get("cross_thread_reads"))
    from_shared = _count(shared.get("stores_from_shared"))
    barriers = shared.get("ordering_barriers")
    lines = sorted({b.get("line") for b in barriers if isinstance(b, dict)
                    and _count(b.get("dependences")) and isinstance(b.get("line"), int)}) \
        if isinstance(barriers, list) else None
    per = (lambda n: n / outputs if n is not None and outputs else None)
    return {"outputs": outputs,
            "loads_per_output": per(tiled if loads else None),
            "shared_reads_per_output": per(cross),
            "reads_by_one_thread": _count(shared.get("max_reads_by_one_thread")),
            "ordering_barriers": lines,
            "outputs_from_shared": per(from_shared)}


def _names(arrays: tuple[str, ...]) -> str:
    return " and ".join(arrays) if len(arrays) <= 2 else ", ".join(arrays)


def _setting(params: dict, exercise: Exercise) -> str:
    names = [c.name for c in exercise.contract.constants]
    return ", ".join(f"{n} {params[n]}" for n in names if n in params) or "the same size"


def each_run(report: dict) -> list[dict]:
    """The reports of a merged report's instrumented runs that finished
    (:func:`autograder.judge.diagnostics.merged` keeps them as ``each``; one graded case each),
    else ``[report]``: every graded size is judged, not only the first."""
    runs = report.get("each")
    runs = [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []
    return [r for r in runs if not r.get("error")] or runs[:1] or [report]


def _size(params) -> str:
    return ", ".join(f"{k} {v}" for k, v in params.items()) if isinstance(params, dict) else ""


def problems(exercise: Exercise, source, report: dict | None) -> list[str]:
    """Why the kernel's use of shared memory and barriers falls short (empty: it does not, or
    the exercise's concept declares no :class:`Use`), at the first graded case's instrumented
    run (:func:`each_run`) where it does, naming that size and how many others fall short.
    ``source`` renders line numbers."""
    concept = exercise.concept
    use: Use | None = concept.use if concept else None
    if use is None or exercise.diagnose is None:
        return []
    if not isinstance(report, dict):
        return [NO_REPORT]
    # The bounds are judged at the first graded case's run (the public cases come first); the
    # barriers over every run. (Issue 30's goal 3 judges each run, with bounds per block.)
    runs = each_run(report)[:1]
    # A barrier orders what it orders at some graded size: at one tile phase the barrier before
    # the next phase's overwrite orders nothing, in the instructor's kernel too.
    lines = sorted({n for r in each_run(report)
                    for n in measured(exercise, r)["ordering_barriers"] or []})
    failing = [(r, found) for r in runs for found in [_problems(exercise, source, r, lines)]
               if found]
    if not failing:
        return []
    run, found = failing[0]
    size = _size(run.get("params"))
    if len(runs) > 1 and size:
        more = (f" and at {len(failing) - 1} other graded size{'s' if len(failing) > 2 else ''}"
                if len(failing) > 1 else "")
        found = [f"{p} (at {size}{more})" for p in found]
    return found


def _problems(exercise: Exercise, source, report: dict, barriers=None) -> list[str]:
    """:func:`problems` at one instrumented run's ``report``; ``barriers``: the ordering
    barriers' lines over every run (None: this run's)."""
    use: Use = exercise.concept.use
    if report.get("out_of_bounds"):  # the run stopped there: its counts are partial
        return []
    params = at(exercise, report)
    got = measured(exercise, report)
    ref = f"the instructor's kernel at {_setting(params, exercise)}"
    how = f": {use.how}" if use.how else ""
    found = []
    if not got["outputs"]:
        return ["the instrumented run wrote no output element, so the use of shared memory "
                "could not be measured"]
    if use.loads_per_output is not None and got["loads_per_output"] is not None:
        expected = use.loads_per_output(params)
        if got["loads_per_output"] > use.load_factor * expected:
            found.append(f"your kernel reads {_names(use.tiled)} from global memory "
                         f"{got['loads_per_output']:.1f} times per output element; "
                         f"{ref} needs about {expected:.1f}{how}")
    if use.shared_reads_per_output is not None and got["shared_reads_per_output"] is not None:
        expected = use.shared_reads_per_output(params)
        if got["shared_reads_per_output"] < use.read_fraction * expected:
            found.append(f"your kernel reads values that other threads wrote to shared memory "
                         f"{got['shared_reads_per_output']:.1f} times per output element; "
                         f"{ref} does about {expected:.1f}: the threads of a block must "
                         "compute from the data the others loaded")
    if use.reads_by_one_thread is not None and got["reads_by_one_thread"] is not None:
        expected = use.reads_by_one_thread(params)
        if got["reads_by_one_thread"] > use.thread_reads_factor * expected:
            found.append(f"one thread of your kernel reads shared memory "
                         f"{got['reads_by_one_thread']:.0f} times in a block; in {ref} no "
                         f"thread reads it more than {expected:.0f} times: split the work into "
                         "parallel steps, each thread doing a little of each")
    lines = got["ordering_barriers"] if barriers is None or got["ordering_barriers"] is None \
        else barriers
    block = report.get("blockdim")
    if use.ordering_barriers and lines is not None and len(lines) < use.ordering_barriers \
            and isinstance(block, list) and all(b == 1 for b in block):
        found.append(f"your blocks have one thread each ({_setting(params, exercise)}), so no "
                     "thread uses data another thread loaded into shared memory: the exercise "
                     "needs blocks of several threads that share their tiles")
    elif use.ordering_barriers and lines is not None and len(lines) < use.ordering_barriers:
        which = (f"only {len(lines)} of your barriers ({source.where(lines[0])}"
                 + "".join(f", {source.where(n)}" for n in lines[1:]) + ") order"
                 if lines else "none of your barriers orders")
        found.append(f"{which} a shared-memory write by one thread and another thread's read "
                     f"of it (or a read and another thread's later overwrite), where "
                     f"{use.ordering_barriers} are needed: a cuda.syncthreads() belongs between "
                     "loading shared data and using it, and between using it and overwriting it")
    if use.outputs_from_shared and got["outputs_from_shared"] is not None \
            and got["outputs_from_shared"] < 0.5:
        found.append(f"{100 * got['outputs_from_shared']:.0f}% of your output elements are "
                     "stored from a value read from shared memory: write the output from the "
                     "tile, not from the input")
    return found
