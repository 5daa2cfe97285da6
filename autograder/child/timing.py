"""In the child (GPU): time the student's kernel against the instructor's at the student's own
constants, interleaved, after a self-check of the instructor's kernel against itself. Returns
raw samples; the grader judges them (:func:`autograder.timing.measure.verdict`)."""

from __future__ import annotations

import types

from autograder.child.contract import remember_source
from autograder.host.kernel_cache import solution_identity
from autograder.wire.contract import Contract
from autograder.wire.protocol import TimingRequest
from autograder.wire.shapes import evaluate as launch_shape
from autograder.timing.outputs import LaunchChecks

TIMING_COPIES = 3
TIMING_COPY_BYTES = 3 << 30
#: Self-checks a measurement may take before it reports the GPU unstable: in a class of 300 on
#: one H200 (8 workers), 2 of 114 correct submissions got a timing error from one self-check
#: off by 5-7 % (2026-11-23).
SELF_CHECK_ATTEMPTS = 3
#: Timed rounds at most (each round's checks keep one row per output).
MAX_ROUNDS = 200


def import_solution(path: str, consts: dict, text: str | None = None) -> types.ModuleType:
    """The instructor's module run with the student's constants (e.g. TILE_WIDTH), so timing
    compares like with like: each top-level ``NAME = ...`` of a constant in ``consts`` assigns
    the student's value instead, before anything derived from it (``TILE = BLOCK_SIZE + 14``)
    is computed and before its kernels are compiled. ``text``: its source, sent by the grader in
    the request (the sandbox shows no solution file); ``path`` names it."""
    import ast

    module = types.ModuleType("instructor_solution")
    module.__file__ = path
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    remember_source(path, text)
    tree = ast.parse(text, path)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in consts):
            node.value = ast.copy_location(ast.Constant(consts[node.targets[0].id]), node.value)
    exec(compile(tree, path, "exec"), module.__dict__)
    for name, value in consts.items():
        setattr(module, name, value)
    return module


def prepare_timing(cuda, kernel, contract: Contract, consts: dict, timing: TimingRequest) -> dict:
    """Everything :func:`measure_timing` needs, with no kernel run yet: device inputs
    (``copies`` rotated sets, at most 3 GiB, allocated, filled only by :func:`warm_up`), shared
    by both kernels; outputs, one set for the student's kernel (``arg_sets``) and one for the
    instructor's (``reference_arg_sets``); the checks of every timed launch (``checks``:
    :class:`autograder.timing.outputs.LaunchChecks`); the instructor's kernel at the student's
    constants, the launch shape and an L2 flusher; every kernel (``kernel``, the student's, the
    instructor's, the fill, flush, poison and compare kernels) compiled for its arguments, all
    but the student's from the host's cache of compiled kernels when it has them
    (:mod:`autograder.host.kernel_cache`). So the child does its CPU work before it asks for the
    GPU."""
    import numpy as np

    from autograder.timing import measure as timing_mod

    solution = import_solution(timing.solution_path, consts, timing.solution_source)
    params = timing.params
    specs = {name: (tuple(shape), np.dtype(dtype))
             for name, (shape, dtype) in timing.input_specs.items()}
    input_bytes = sum(int(np.prod(shape)) * dt.itemsize for shape, dt in specs.values())
    copies = max(1, min(TIMING_COPIES, TIMING_COPY_BYTES // max(1, input_bytes)))

    def output_arrays():
        return {name: cuda.device_array(launch_shape(shape, params, consts), dtype)
                for name, (shape, dtype) in timing.outputs.items()}

    outputs, reference_outputs = output_arrays(), output_arrays()
    arg_sets, reference_arg_sets, copy_fills = [], [], []
    for copy in range(copies):
        views, fills = {}, []
        for name, (shape, dt) in specs.items():
            low, high = (timing.input_ranges or {}).get(name) or (None, None)
            views[name], fill = timing_mod.device_random_later(
                cuda, shape, dt, seed=(timing.input_seed or 0) + copy, low=low, high=high)
            fills.append(fill)
        copy_fills.append(fills)
        arg_sets.append([{**views, **outputs}[a] for a in contract.args])
        reference_arg_sets.append([{**views, **reference_outputs}[a] for a in contract.args])
    reference = getattr(solution, contract.kernel)
    if getattr(kernel, "targetoptions", {}).get("lineinfo"):  # like for like
        reference.targetoptions["lineinfo"] = True
    timing_mod.compiled_for(kernel, arg_sets[0])
    text = timing.solution_source
    identity = solution_identity(text, contract.kernel, consts) if text is not None else None
    cached = timing_mod.compiled_for(reference, reference_arg_sets[0], identity)
    zeroed = contract.zeroed
    checks = LaunchChecks(cuda, list(outputs.values()), list(reference_outputs.values()),
                          copy_fills, MAX_ROUNDS, timing_mod.compiled_for,
                          [name in zeroed for name in outputs])
    return {
        "reference": reference,
        "arg_sets": arg_sets,
        "reference_arg_sets": reference_arg_sets,
        "checks": checks,
        "fills": [f for fills in copy_fills for f in fills],
        "grid": launch_shape(contract.grid, params, consts),
        "block": launch_shape(contract.block, params, consts),
        "flush": timing_mod.l2_flusher(cuda),
        "min_rounds": timing.min_rounds,
        "budget_s": timing.budget_s,
        "thresholds": (None if timing.full_ratio is None or timing.zero_ratio is None
                       else (timing.full_ratio, timing.zero_ratio)),
        "instructor_cached": cached,
    }


def warm_up(cuda, kernel, prepared: dict) -> None:
    """The first GPU work of the timing: fill the inputs, then one launch of each kernel."""
    for fill in prepared.get("fills", ()):
        fill()
    p = prepared
    kernel[p["grid"], p["block"]](*p["arg_sets"][0])
    p["reference"][p["grid"], p["block"]](*p.get("reference_arg_sets", p["arg_sets"])[0])
    cuda.synchronize()


def measure_timing(cuda, kernel, prepared: dict) -> dict:
    """The instructor's kernel against itself (the GPU self-check, taken again up to
    :data:`SELF_CHECK_ATTEMPTS` times while it is off), then the student's against the
    instructor's, each timed launch checked (``prepared["checks"]``); the raw samples and the
    checks' numbers for the grader, as the fields of :class:`autograder.wire.protocol.TimingSamples`
    (milliseconds; ``seconds`` of sampling; ``retaken``: samples of either kernel taken again,
    disturbed or enqueued late: :func:`autograder.timing.measure.time_pair`)."""
    from autograder.timing import measure as timing_mod

    p = prepared
    copies = len(p["arg_sets"])

    def launcher(k, arg_sets):
        return lambda r: k[p["grid"], p["block"]](*arg_sets[r % copies])

    reference = launcher(p["reference"], p.get("reference_arg_sets", p["arg_sets"]))
    seconds = 0.0
    for _ in range(SELF_CHECK_ATTEMPTS):  # a moment's disturbance: measured again, not an error
        self_check = timing_mod.time_pair(cuda, reference, reference, p["flush"],
                                          min_rounds=8, max_rounds=40, budget_s=3.0)
        seconds += self_check["seconds"]
        if timing_mod.self_check_problem(self_check["a_ms"], self_check["b_ms"]) is None:
            break
    checks = p.get("checks")
    if checks is not None:
        checks.reset()
    main = timing_mod.time_pair(cuda, launcher(kernel, p["arg_sets"]), reference, p["flush"],
                                min_rounds=p["min_rounds"], max_rounds=MAX_ROUNDS,
                                budget_s=p["budget_s"], thresholds=p.get("thresholds"),
                                before=None if checks is None else checks.before,
                                after_round=None if checks is None else checks.after_round)
    return {"student_ms": main["a_ms"], "instructor_ms": main["b_ms"],
            "self_a_ms": self_check["a_ms"], "self_b_ms": self_check["b_ms"],
            "copies": copies, "seconds": main["seconds"] + seconds,
            "instructor_cached": p.get("instructor_cached"),
            "checks": None if checks is None else checks.results(len(main["a_ms"])),
            "retaken": main.get("retaken")}
