"""In the child (GPU): time the student's kernel against the instructor's, interleaved, after a
self-check of the instructor's kernel against itself. Returns raw samples; the grader judges them
(:func:`autograder.timing.measure.verdict`).

The instructor's kernel is timed at the instructor's configuration (issue 30): its module as
written, its own constants (``TILE_WIDTH = 16``) and the launch the contract gives for them, on
the same inputs as the student's kernel, never at constants the student chose (a naive matmul
with ``TILE_WIDTH = 2`` beat the instructor's kernel compiled at 2: 0.35x). Where the exercise has
several instructor references (the solution and its kernel with run-time loop bounds), each is
timed against the others first and the fastest on this GPU is the one compared with. The
student's outputs are checked against the instructor's kernel run at the student's constants,
untimed (:class:`autograder.timing.outputs.LaunchChecks`), since an output's shape may follow the
constants (one partial sum per block): only keyed digests of those outputs are kept, on the host,
before the student's kernel first runs, and the timed references' outputs are reset before every
timed student launch, so no answer of the instructor's is in device memory while student code
runs (issue 30: out-of-bounds reads and writes of the stored answers)."""

from __future__ import annotations

import types
from pathlib import PurePath

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
#: The choice between two instructor references: rounds (at least, at most) after one warm-up
#: round (both kernels ran in :func:`warm_up`), and seconds at most; it stops once the ratio's
#: 95 % interval excludes 1 (:func:`autograder.timing.measure.settled` at the thresholds (1, 1))
#: or at 1 % precision (two references that close: either will do). Usually 7 launches of each
#: reference (0.3-2 ms at the timing sizes) with an L2 flush before each: tens of milliseconds
#: of the GPU's exclusive time per grading.
CHOICE_ROUNDS = (6, 40)
CHOICE_BUDGET_S = 2.0


def import_solution(path: str, consts: dict, text: str | None = None) -> types.ModuleType:
    """The instructor's module, run as written (``consts`` empty: the timed reference) or with
    other constants: each top-level ``NAME = ...`` of a constant in ``consts`` assigns that
    value instead, before anything derived from it (``TILE = BLOCK_SIZE + 14``) is computed and
    before its kernels are compiled (the kernel that computes the expected outputs at the
    student's constants; the concept's counts at a case's constants). ``text``: its source,
    sent by the grader in the request (the sandbox shows no solution file); ``path`` names
    it."""
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


def own_constants(module, contract: Contract, path: str) -> dict:
    """The contract's constants as the instructor's ``module`` defines them (name → int).
    Raises ``ValueError`` naming ``path`` for one it does not define as an integer (the
    grader's setup: its preflight grades that solution first)."""
    found = {}
    for c in contract.constants:
        value = getattr(module, c.name, None)
        if type(value) is not int:
            raise ValueError(f"the instructor's {PurePath(path).name} defines no integer "
                             f"{c.name}")
        found[c.name] = value
    return found


def prepare_timing(cuda, kernel, contract: Contract, consts: dict, timing: TimingRequest) -> dict:
    """Everything :func:`measure_timing` needs, with no kernel run yet: device inputs
    (``copies`` rotated sets, at most 3 GiB, allocated, filled only by :func:`warm_up`), shared
    by every kernel; the student's kernel's outputs, launch shape (at ``consts``, the student's
    constants) and argument sets (``arg_sets``, ``grid``, ``block``); ``references``: each
    instructor reference of the request (the solution, then ``timing.more_solutions``) as a
    dict with its file ``name``, ``kernel``, own ``constants``, ``grid``, ``block``,
    ``arg_sets`` (its own outputs, shaped at its constants) and ``cached``; ``expect``: per
    input copy, the launch of the instructor's solution at the student's constants into that
    copy's expected outputs; the checks of every timed launch (``checks``:
    :class:`autograder.timing.outputs.LaunchChecks`) and an L2 flusher. Every kernel (the
    student's, the references, the expected outputs', the fill, flush, poison and digest
    kernels) is compiled for its arguments now, all but the student's from the host's cache of
    compiled kernels when it has them (:mod:`autograder.host.kernel_cache`), so the child does
    its CPU work before it asks for the GPU. ``reference`` and ``reference_arg_sets``: the first
    reference's kernel and argument sets (for the benchmarks). Raises ``ValueError`` for a
    reference that does not define the contract's constants."""
    import numpy as np

    from autograder.host.kernel_cache import provide
    from autograder.timing import measure as timing_mod

    provide(timing.kernels)  # the host's compiled kernels, verified by the grader and sent
    params = timing.params
    consts = {c.name: consts[c.name] for c in contract.constants if c.name in consts}
    specs = {name: (tuple(shape), np.dtype(dtype))
             for name, (shape, dtype) in timing.input_specs.items()}
    input_bytes = sum(int(np.prod(shape)) * dt.itemsize for shape, dt in specs.values())
    copies = max(1, min(TIMING_COPIES, TIMING_COPY_BYTES // max(1, input_bytes)))

    def output_arrays(at: dict) -> dict:
        return {name: cuda.device_array(launch_shape(shape, params, at), dtype)
                for name, (shape, dtype) in timing.outputs.items()}

    copy_views, copy_fills = [], []
    for copy in range(copies):
        views, fills = {}, []
        for name, (shape, dt) in specs.items():
            low, high = (timing.input_ranges or {}).get(name) or (None, None)
            views[name], fill = timing_mod.device_random_later(
                cuda, shape, dt, seed=(timing.input_seed or 0) + copy, low=low, high=high)
            fills.append(fill)
        copy_views.append(views)
        copy_fills.append(fills)

    def arg_sets(outputs: dict) -> list:
        return [[{**views, **outputs}[a] for a in contract.args] for views in copy_views]

    outputs = output_arrays(consts)
    student_args = arg_sets(outputs)
    timing_mod.compiled_for(kernel, student_args[0])
    lineinfo = getattr(kernel, "targetoptions", {}).get("lineinfo")
    sources = [(timing.solution_path, timing.solution_source),
               *((path, text) for path, text in timing.more_solutions or ())]
    references, outputs_at = [], {}
    for path, text in sources:
        module = import_solution(path, {}, text)  # as written: the instructor's configuration
        own = own_constants(module, contract, path)
        key = tuple(sorted(own.items()))
        if key not in outputs_at:  # references of the same constants share their outputs
            outputs_at[key] = output_arrays(own)
        reference = getattr(module, contract.kernel)
        if lineinfo:  # like for like
            reference.targetoptions["lineinfo"] = True
        ref_args = arg_sets(outputs_at[key])
        identity = solution_identity(text, contract.kernel, own) if text is not None else None
        references.append({
            "name": PurePath(path).name, "kernel": reference, "constants": own,
            "grid": launch_shape(contract.grid, params, own),
            "block": launch_shape(contract.block, params, own), "arg_sets": ref_args,
            "cached": timing_mod.compiled_for(reference, ref_args[0], identity)})

    # The expected outputs: the instructor's solution at the student's constants, untimed.
    first = references[0]
    if consts == first["constants"]:
        checker = first["kernel"]
    else:
        checker = getattr(import_solution(timing.solution_path, consts, timing.solution_source),
                          contract.kernel)
    expected = [list(output_arrays(consts).values()) for _ in range(copies)]
    expected_args = [[{**views, **dict(zip(outputs, arrays))}[a] for a in contract.args]
                     for views, arrays in zip(copy_views, expected)]
    if checker is not first["kernel"]:
        text = timing.solution_source
        timing_mod.compiled_for(checker, expected_args[0], solution_identity(
            text, contract.kernel, consts) if text is not None else None)
    grid = launch_shape(contract.grid, params, consts)
    block = launch_shape(contract.block, params, consts)
    zeroed = contract.zeroed
    checks = LaunchChecks(cuda, list(outputs.values()), expected, copy_fills, MAX_ROUNDS,
                          timing_mod.compiled_for, [name in zeroed for name in outputs],
                          [arr for outs in outputs_at.values() for name, arr in outs.items()
                           if name in zeroed],
                          [(arr, name in zeroed) for outs in outputs_at.values()
                           for name, arr in outs.items()])
    return {
        "references": references,
        "reference": first["kernel"],
        "reference_arg_sets": first["arg_sets"],
        "arg_sets": student_args,
        "constants": consts,
        "expect": [(lambda args=args: checker[grid, block](*args)) for args in expected_args],
        "checks": checks,
        "fills": [f for fills in copy_fills for f in fills],
        "grid": grid,
        "block": block,
        "flush": timing_mod.l2_flusher(cuda),
        "min_rounds": timing.min_rounds,
        "budget_s": timing.budget_s,
        "thresholds": (None if timing.full_ratio is None or timing.zero_ratio is None
                       else (timing.full_ratio, timing.zero_ratio)),
        "instructor_cached": all(r["cached"] for r in references),
    }


def warm_up(cuda, kernel, prepared: dict) -> None:
    """The first GPU work of the timing: fill the inputs, compute the expected outputs of every
    input copy (the instructor's kernel at the student's constants) and keep only their digests
    on the host (:meth:`autograder.timing.outputs.LaunchChecks.expect`; the outputs poisoned,
    then freed by :meth:`~autograder.timing.outputs.LaunchChecks.seal`: no expected output is
    in device memory when the student's kernel first runs), then one launch of the student's
    kernel and of each instructor reference."""
    p = prepared
    for fill in p.get("fills", ()):
        fill()
    checks = p.get("checks")
    if checks is not None:
        for copy, launch in enumerate(p.get("expect", ())):
            checks.expect(copy, launch)
        p["expect"] = []  # the launches hold the expected outputs' arrays: freed by the seal
        checks.seal()
    kernel[p["grid"], p["block"]](*p["arg_sets"][0])
    for ref in p["references"]:
        ref["kernel"][ref["grid"], ref["block"]](*ref["arg_sets"][0])
    cuda.synchronize()


def _launcher(kernel, grid, block, arg_sets):
    """``launch(r)``: one launch of ``kernel`` on input copy ``r % copies``."""
    return lambda r: kernel[grid, block](*arg_sets[r % len(arg_sets)])


def choose_reference(cuda, references: list, flush) -> tuple[int, list, float]:
    """The fastest of ``references`` (:func:`prepare_timing`'s) on this GPU: each timed against
    the fastest so far, interleaved (:func:`autograder.timing.measure.time_pair`, at most
    :data:`CHOICE_ROUNDS` rounds and :data:`CHOICE_BUDGET_S` seconds each). Returns (its index,
    ``[[name a, name b, ratio a/b], ...]`` per comparison, seconds of sampling). One reference:
    (0, [], 0.0), with no GPU work."""
    from autograder.timing import measure as timing_mod

    best, compared, seconds = 0, [], 0.0
    launch = [_launcher(r["kernel"], r["grid"], r["block"], r["arg_sets"]) for r in references]
    for i in range(1, len(references)):
        pair = timing_mod.time_pair(cuda, launch[best], launch[i], flush,
                                    min_rounds=CHOICE_ROUNDS[0], max_rounds=CHOICE_ROUNDS[1],
                                    budget_s=CHOICE_BUDGET_S, thresholds=(1.0, 1.0), warmup=1)
        seconds += pair["seconds"]
        ratio = timing_mod.ratio_stats(pair["a_ms"], pair["b_ms"]).ratio
        compared.append([references[best]["name"], references[i]["name"], round(ratio, 4)])
        if ratio > 1.0:
            best = i
    return best, compared, seconds


def measure_timing(cuda, kernel, prepared: dict) -> dict:
    """The fastest instructor reference chosen (:func:`choose_reference`), timed against itself
    (the GPU self-check, taken again up to :data:`SELF_CHECK_ATTEMPTS` times while it is off),
    then the student's kernel against it, each timed launch checked (``prepared["checks"]``);
    the raw samples and the checks' numbers for the grader, as the fields of
    :class:`autograder.wire.protocol.TimingSamples` (milliseconds; ``seconds`` of sampling, the
    choice's included; ``retaken``: samples of either kernel taken again, disturbed or enqueued
    late: :func:`autograder.timing.measure.time_pair`; ``reference``: the chosen reference's
    file ``name`` and ``constants``, the student's ``student_constants``, the comparisons of
    the choice (``compared``) and its ``choice_seconds``)."""
    from autograder.timing import measure as timing_mod

    p = prepared
    for fill in p.get("fills", ()):  # whatever the student's warm-up launch did to them
        fill()
    best, compared, seconds = choose_reference(cuda, p["references"], p["flush"])
    choice_seconds = seconds
    chosen = p["references"][best]
    reference = _launcher(chosen["kernel"], chosen["grid"], chosen["block"], chosen["arg_sets"])
    for _ in range(SELF_CHECK_ATTEMPTS):  # a moment's disturbance: measured again, not an error
        self_check = timing_mod.time_pair(cuda, reference, reference, p["flush"],
                                          min_rounds=8, max_rounds=40, budget_s=3.0)
        seconds += self_check["seconds"]
        if timing_mod.self_check_problem(self_check["a_ms"], self_check["b_ms"]) is None:
            break
    checks = p.get("checks")
    if checks is not None:
        checks.reset()
    main = timing_mod.time_pair(cuda, _launcher(kernel, p["grid"], p["block"], p["arg_sets"]),
                                reference, p["flush"],
                                min_rounds=p["min_rounds"], max_rounds=MAX_ROUNDS,
                                budget_s=p["budget_s"], thresholds=p.get("thresholds"),
                                before=None if checks is None else checks.before,
                                after_round=None if checks is None else checks.after_round)
    return {"student_ms": main["a_ms"], "instructor_ms": main["b_ms"],
            "self_a_ms": self_check["a_ms"], "self_b_ms": self_check["b_ms"],
            "copies": len(p["arg_sets"]), "seconds": main["seconds"] + seconds,
            "instructor_cached": p.get("instructor_cached"),
            "checks": None if checks is None else checks.results(len(main["a_ms"])),
            "retaken": main.get("retaken"),
            "reference": {"name": chosen["name"], "constants": dict(chosen["constants"]),
                          "student_constants": dict(p.get("constants") or {}),
                          "compared": compared, "choice_seconds": round(choice_seconds, 4)}}
