"""The concept test's second half: shared memory and barriers *used*, from the counts of the
instrumented run (:mod:`autograder.instrument`, ``global_loads`` and ``shared_use``), judged
against an exercise's :class:`autograder.exercises.base.Use` bounds.

The bounds follow the data, not the traffic: every read of global memory counts as a load
(atomics included), and "through shared memory" means the data flow of each output (the input
elements its value depends on that another thread of the block wrote to shared memory), so a
kernel that does the work with fewer loads or fewer shared reads than the instructor's never
fails a bound, and a kernel that makes the reads without the data going through them does.

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
    written), ``loads_per_output`` (of the ``tiled`` arrays, every access that reads them),
    ``shared_inputs_per_output`` (inputs reaching each output through another thread's shared
    write, on average), ``reads_by_one_thread``, ``steps_per_output`` (the deepest output's
    chain of combining operations), ``ordering_barriers`` (lines) and ``outputs_from_shared``
    (fraction). A count the report lacks is None."""
    use = exercise.concept.use
    loads = report.get("global_loads") if isinstance(report.get("global_loads"), dict) else {}
    shared = report.get("shared_use") if isinstance(report.get("shared_use"), dict) else {}
    written = loads.get("outputs_written")
    outputs = sum(v for v in written.values() if _count(v) is not None) \
        if isinstance(written, dict) else 0
    by_array = loads.get("by_array") if isinstance(loads.get("by_array"), dict) else {}
    tiled = sum(_count(by_array.get(a)) or 0.0 for a in use.tiled)
    traced = _count(shared.get("outputs_traced"))
    inputs = _count(shared.get("shared_inputs"))
    from_shared = _count(shared.get("outputs_from_shared"))
    barriers = shared.get("ordering_barriers")
    lines = sorted({b.get("line") for b in barriers if isinstance(b, dict)
                    and _count(b.get("dependences")) and isinstance(b.get("line"), int)}) \
        if isinstance(barriers, list) else None
    per = (lambda n: n / outputs if n is not None and outputs else None)
    traced_per = (lambda n: n / traced if n is not None and traced else None)
    return {"outputs": outputs,
            "loads_per_output": per(tiled if loads else None),
            "shared_inputs_per_output": traced_per(inputs),
            "reads_by_one_thread": _count(shared.get("max_reads_by_one_thread")),
            "steps_per_output": _count(shared.get("max_output_steps")),
            "ordering_barriers": lines,
            "outputs_from_shared": traced_per(from_shared)}


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
    runs = each_run(report)
    # A barrier orders what it orders at some graded size: at one tile phase the barrier before
    # the next phase's overwrite orders nothing, in the instructor's kernel too. A run that
    # stopped (an out-of-bounds access) never showed what its barriers order: with one, the
    # barriers are not counted (the stop is a finding of its own; the runs that finished may
    # all have had one phase, where the instructor's second barrier orders nothing either).
    lines = sorted({n for r in runs for n in measured(exercise, r)["ordering_barriers"] or []})
    every = report.get("each") if isinstance(report.get("each"), list) else []
    cut = any(isinstance(r, dict) and r.get("error") for r in every)
    failing = [(r, found) for r in runs
               for found in [_problems(exercise, source, r, lines, count_barriers=not cut)]
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


def _heaviest_block(use: Use, params: dict, report: dict):
    """(block, loads, the instructor's loads there, outputs) of the first block run whose loads
    of the ``tiled`` arrays exceed ``load_factor`` times the instructor's (``Use.block_loads``);
    None when every block keeps within it (or the report has no per-block counts)."""
    loads = report.get("global_loads") if isinstance(report.get("global_loads"), dict) else {}
    blocks = loads.get("blocks") if isinstance(loads.get("blocks"), list) else []
    for entry in blocks:
        if not isinstance(entry, dict) or not isinstance(entry.get("block"), list):
            continue
        by_array = entry.get("loads") if isinstance(entry.get("loads"), dict) else {}
        loaded = sum(_count(by_array.get(a)) or 0.0 for a in use.tiled)
        block = tuple(int(b) for b in entry["block"] if isinstance(b, int))
        expected = use.block_loads(params, block)
        if loaded > use.load_factor * expected:
            return block, loaded, expected, _count(entry.get("outputs")) or 0.0
    return None


def _problems(exercise: Exercise, source, report: dict, barriers=None,
              count_barriers: bool = True) -> list[str]:
    """:func:`problems` at one instrumented run's ``report``; ``barriers``: the ordering
    barriers' lines over every run (None: this run's); ``count_barriers``: False leaves the
    ordering barriers' count out (a run stopped before it showed them)."""
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
    heavy = _heaviest_block(use, params, report) if use.block_loads is not None else None
    if heavy is not None:
        block, loaded, expected, outputs = heavy
        found.append(f"your kernel reads {_names(use.tiled)} from global memory {loaded:.0f} "
                     f"times in block {block} (for its {outputs:.0f} output elements); {ref} "
                     f"needs about {expected:.0f} there{how}")
    elif use.block_loads is None and use.loads_per_output is not None \
            and got["loads_per_output"] is not None:
        expected = use.loads_per_output(params)
        if got["loads_per_output"] > use.load_factor * expected:
            found.append(f"your kernel reads {_names(use.tiled)} from global memory "
                         f"{got['loads_per_output']:.1f} times per output element; "
                         f"{ref} needs about {expected:.1f}{how}")
    if use.shared_inputs_per_output is not None and got["shared_inputs_per_output"] is not None:
        expected = use.shared_inputs_per_output(params)
        if got["shared_inputs_per_output"] < use.read_fraction * expected:
            found.append(f"your output elements are computed from "
                         f"{got['shared_inputs_per_output']:.1f} input elements each (on "
                         "average) that another thread of the block loaded and passed through "
                         f"shared memory, where {ref} has at least {expected:.1f}: the threads "
                         "of a block must compute from the data the others loaded")
    if use.reads_by_one_thread is not None and got["reads_by_one_thread"] is not None:
        expected = use.reads_by_one_thread(params)
        if got["reads_by_one_thread"] > use.thread_reads_factor * expected:
            found.append(f"one thread of your kernel reads shared memory "
                         f"{got['reads_by_one_thread']:.0f} times in a block; in {ref} no "
                         f"thread reads it more than {expected:.0f} times: split the work into "
                         "parallel steps, each thread doing a little of each")
    if use.steps_per_output is not None and got["steps_per_output"] is not None:
        expected = use.steps_per_output(params)
        if got["steps_per_output"] > use.steps_factor * expected:
            found.append(f"an output element of your kernel comes out of a chain of "
                         f"{got['steps_per_output']:.0f} operations, each waiting for the one "
                         f"before, where {ref} needs at most {expected:.0f}: combine the "
                         "values in parallel steps (a tree), not one after another")
    lines = got["ordering_barriers"] if barriers is None or got["ordering_barriers"] is None \
        else barriers
    block = report.get("blockdim")
    if not count_barriers:
        pass
    elif use.ordering_barriers and lines is not None and len(lines) < use.ordering_barriers \
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
    if use.outputs_from_shared and got["outputs_from_shared"] is not None:
        expected = 1.0 if use.outputs_from_shared is True else use.outputs_from_shared(params)
        if got["outputs_from_shared"] < 0.5 * expected:
            found.append(f"{100 * got['outputs_from_shared']:.0f}% of your output elements are "
                         "stored from a value another thread of the block wrote to shared "
                         f"memory ({100 * expected:.0f}% in {ref}): write the output from the "
                         "tile another thread loaded, not from the input or your own slot")
    return found
