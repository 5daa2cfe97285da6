"""Concept tests judge use, not presence: every instructor solution meets its exercise's
:class:`autograder.exercises.base.Use` bounds with margin at every constant tried, and the
counts behind them (``shared_use``) say what a kernel did with its shared memory and barriers."""

from __future__ import annotations

import importlib.util
import itertools
import math

import numpy as np
import pytest

from autograder import exercises
from autograder.judge import concept_use
from autograder.child.timing import import_solution
from autograder.exercises import solution_path
from autograder.instrument import instrumented_launch
from autograder.wire.shapes import evaluate
from autograder.source.submission import load_source

from .conftest import FILES, ROOT, line_of

_count = itertools.count()
USED = [n for n in exercises.names() if exercises.get(n).concept and exercises.get(n).concept.use]


def _values(c) -> list[int]:
    """A constant's ends, its middle (geometric for a power of two) and 2 (the smallest tile
    of more than one thread), where legal."""
    mid = 2 ** round(math.log2(math.sqrt(c.low * c.high))) if c.power_of_two \
        else (c.low + c.high) // 2 + 1
    return sorted(v for v in {c.low, c.high, mid, 2} if c.low <= v <= c.high)


def largest_simulated(ex) -> dict:
    """The parameters of the graded case of ``ex`` the simulator runs whose smallest size is the
    largest (then the largest in all): several tiles in every dimension (the instrumented runs
    happen at the graded cases)."""
    def sizes(case):
        ints = [v for v in case.params.values() if type(v) is int]
        return min(ints), sum(ints)
    return max((c for c in ex.cases if c.sim), key=sizes).params


def settings(name: str) -> list[dict]:
    """Every legal combination of :func:`_values` of the exercise's constants (the contract's
    checks hold) whose blocks have more than one thread."""
    ex = exercises.get(name)
    found = []
    for values in itertools.product(*(_values(c) for c in ex.contract.constants)):
        consts = {c.name: v for c, v in zip(ex.contract.constants, values)}
        if all(eval(e, {"__builtins__": {}}, dict(consts)) for e, _ in ex.contract.checks) \
                and math.prod(evaluate(ex.contract.block, largest_simulated(ex), consts)) > 1:
            found.append(consts)
    return found


def run(name: str, path, consts: dict | None = None, params: dict | None = None) -> dict:
    """The instrumented report of ``path`` on ``name``'s largest simulated case (or at
    ``params``); the instructor's solution is imported with ``consts`` as the grader does for
    timing."""
    ex = exercises.get(name)
    if consts is not None:
        module = import_solution(str(path), consts)
    else:
        spec = importlib.util.spec_from_file_location(f"concept_use_{next(_count)}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    values = {c.name: getattr(module, c.name) for c in ex.contract.constants}
    params = dict(largest_simulated(ex) if params is None else params)
    arrays = ex.make_inputs(params, np.random.default_rng(7))
    for out, (shape, dtype) in ex.outputs(params).items():
        arrays[out] = np.zeros(evaluate(shape, params, values), dtype)
    report = instrumented_launch(getattr(module, ex.contract.kernel),
                                 evaluate(ex.contract.grid, params, values),
                                 evaluate(ex.contract.block, params, values),
                                 [arrays[a] for a in ex.contract.args],
                                 max_blocks=ex.diagnose.max_blocks)
    report["constants"] = values
    report["params"] = params   # the case the Use bounds are computed at, as the child says
    return report


def test_every_exercise_with_shared_memory_declares_its_use():
    shared = [n for n in exercises.names()
              if exercises.get(n).concept and exercises.get(n).concept.min_shared_bytes]
    assert set(USED) == set(shared)
    for name in USED:
        assert exercises.get(name).diagnose is not None, f"{name}: Use needs a Diagnose case"
        assert len(settings(name)) >= 2


SETTINGS = [(n, c) for n in USED for c in settings(n)]


@pytest.mark.parametrize("name, consts", SETTINGS, ids=[f"{n}-{c}" for n, c in SETTINGS])
def test_instructor_solution_meets_its_use_bounds_with_margin(name, consts, sim_only):
    ex = exercises.get(name)
    use = ex.concept.use
    report = run(name, solution_path(ex), consts)
    assert report["error"] is None and not report["races"]
    got = concept_use.measured(ex, report)
    params = concept_use.at(ex, report)
    margin = 1.25
    if use.block_loads:
        for b in report["global_loads"]["blocks"]:
            loaded = sum(b["loads"].get(a, 0) for a in use.tiled)
            assert loaded * margin <= use.load_factor * use.block_loads(params, tuple(b["block"]))
    elif use.loads_per_output:
        assert got["loads_per_output"] * margin <= use.load_factor * use.loads_per_output(params)
    if use.shared_inputs_per_output:
        assert got["shared_inputs_per_output"] >= \
            margin * use.read_fraction * use.shared_inputs_per_output(params)
    if use.reads_by_one_thread:
        assert got["reads_by_one_thread"] * margin <= \
            use.thread_reads_factor * use.reads_by_one_thread(params)
    if use.steps_per_output:
        assert got["steps_per_output"] * margin <= \
            use.steps_factor * use.steps_per_output(params)
    assert len(got["ordering_barriers"]) >= use.ordering_barriers
    if use.outputs_from_shared:
        expected = 1.0 if use.outputs_from_shared is True else use.outputs_from_shared(params)
        assert got["outputs_from_shared"] >= margin * 0.5 * expected
    assert concept_use.problems(ex, load_source(solution_path(ex)), report) == []


def test_a_one_thread_tile_is_told_its_blocks_share_nothing(sim_only):
    ex = exercises.get("tiled_matmul")
    report = run("tiled_matmul", solution_path(ex), {"TILE_WIDTH": 1})
    found = concept_use.problems(ex, load_source(solution_path(ex)), report)
    assert len(found) == 1 and "one thread each (TILE_WIDTH 1)" in found[0]


def test_no_report_fails_the_use_check():
    ex = exercises.get("transpose")
    assert concept_use.problems(ex, None, None) == [concept_use.NO_REPORT]


def test_only_the_first_barrier_after_a_write_orders_it(sim_only):
    """Two barriers after the load: the first separates the load from the sums, the second
    orders nothing; the barrier before the next phase's loads orders the reads against them."""
    path = FILES / "tiled_double_barrier.py"
    report = run("tiled_matmul", path, {"TILE_WIDTH": 4})
    lines = [b["line"] for b in report["shared_use"]["ordering_barriers"]]
    assert lines == [line_of(path, "# first"), line_of(path, "# before the next loads")]


def test_cross_thread_reads_and_outputs_from_shared_are_counted(sim_only):
    ex = exercises.get("transpose")
    report = run("transpose", solution_path(ex), params={"rows": 64, "cols": 96})  # whole tiles
    use = report["shared_use"]
    (tile,) = use["arrays"]
    tiles = report["blocks_run"]   # 32 x 32 each
    assert tile["name"] == "tile"
    assert tile["writes"] == tile["reads"] == tiles * 32 * 32
    assert tile["cross_thread_reads"] == tiles * 32 * 31   # all but each tile's diagonal
    # B's elements stored from a tile element another thread loaded: all but the diagonal's,
    # which the storing thread loaded itself
    assert use["outputs_traced"] == tiles * 32 * 32
    assert use["outputs_from_shared"] == use["shared_inputs"] == tiles * 32 * 31


def test_a_transpose_stored_from_its_own_slot_has_no_output_from_shared(sim_only):
    """Issue 30: each element in its own slot, a neighbour's slot read once, B stored from the
    thread's own slot: cross-thread reads and no bank conflict, but no output passed from one
    thread to another."""
    ex = exercises.get("transpose")
    path = ROOT / "assignments" / "transpose" / "mutants" / "store_from_own_slot.py"
    report = run("transpose", path, params={"rows": 64, "cols": 96})
    use = report["shared_use"]
    assert use["cross_thread_reads"] > 0 and report["bank_conflicts"] == []
    assert use["outputs_from_shared"] == use["shared_inputs"] == 0
    found = concept_use.problems(ex, load_source(path), report)
    assert any("0% of your output elements" in f for f in found)


def test_reads_through_atomics_are_global_loads(sim_only):
    """Issue 30: a naive matmul reading A and B with ``cuda.atomic.add(X, idx, 0.0)``: every
    atomic is a load (2 * width per output), none is an output."""
    ex = exercises.get("tiled_matmul")
    path = ROOT / "assignments" / "tiled_matmul" / "mutants" / "reads_through_atomics.py"
    report = run("tiled_matmul", path, params={"width": 32})
    outputs = report["blocks_run"] * 16 * 16
    assert report["global_loads"]["by_array"] == {"A": outputs * 32, "B": outputs * 32}
    assert report["global_loads"]["outputs_written"] == {"C": outputs}
    assert report["global_loads_per_output"] == 64.0
    found = concept_use.problems(ex, load_source(path), report)
    assert any("from global memory 16384 times in block (0, 0, 0)" in f for f in found), found


def test_loads_through_a_transpose_or_a_reshape_are_counted(sim_only):
    """``A.T`` and ``B.reshape(...)`` are views of the arguments: their loads are A's and B's,
    so a naive kernel cannot hide its 2 * width loads per output behind them."""
    report = run("tiled_matmul", FILES / "aliased_loads.py", params={"width": 40})
    outputs = report["global_loads"]["outputs_written"]["C"]
    assert report["global_loads"]["by_array"] == {"A": 40 * outputs, "B": 40 * outputs}
    assert report["global_loads_per_output"] == 80.0
