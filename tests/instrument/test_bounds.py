"""Out-of-bounds accesses: every element index against its array's shape, whatever the value."""

import json
import re

import numpy as np
import pytest

from autograder import exercises
from autograder.judge import diagnostics
from autograder.judge.inputs import Grading
from autograder.grading import plan
from autograder.instrument import instrumented_launch
from autograder.instrument.launch import select_blocks
from autograder.source.submission import Source
from conftest import run_file_on_the_simulator, simulator_in_process

from .conftest import ROOT, f32, line_of, load


def _matmul_le(m, n, k):
    module = load("matmul_load_guard_le.py")
    tile = module.TILE_WIDTH
    grid = (-(-k // tile), -(-m // tile))
    return module.matmul_any_size, grid, (tile, tile), [f32(m, n), f32(n, k, seed=1),
                                                        np.zeros((m, k), np.float32)]


def test_a_read_past_one_dimension_is_found_with_its_line_index_and_shape():
    kernel, grid, block, args = _matmul_le(23, 37, 19)
    r = instrumented_launch(kernel, grid, block, args, max_blocks=2)
    [oob] = r["out_of_bounds"]
    assert oob["array"] == "A" and oob["access"] == "read" and oob["space"] == "global"
    assert oob["index"][0] == 23 and 0 <= oob["index"][1] < 37 and oob["shape"] == [23, 37]
    assert oob["line"] == line_of("matmul_load_guard_le.py", "if row <= m")
    assert oob["block"] == [1, 1, 0]   # the last block: only there does row reach m
    assert r["error"]["kind"] == "out_of_bounds"
    assert json.loads(json.dumps(r)) == r


def test_a_column_index_inside_the_buffer_but_outside_the_row_is_found():
    """``A[row, n]`` of a C-contiguous (m, n) array is element (row + 1, 0) in memory: it lies
    inside the allocation (memcheck sees nothing) but outside the array's second dimension."""
    kernel, grid, block, args = _matmul_le(16, 16, 16)   # no partial tile: row never reaches m
    r = instrumented_launch(kernel, grid, block, args)
    assert r["out_of_bounds"] == []
    r = instrumented_launch(load("reads_one_past_the_row.py").kernel, 1, 4,
                            [f32(4, 16), np.zeros(4, np.float32)])
    [oob] = r["out_of_bounds"]
    assert (oob["array"], oob["index"], oob["shape"]) == ("A", [0, 16], [4, 16])


@pytest.mark.parametrize("fill", [0, 7, np.iinfo(np.int32).max])
def test_a_negative_index_is_found_whatever_the_values(fill):
    x = np.full(300, fill, np.int32)
    r = instrumented_launch(load("scan_wraps_negative.py").block_scan, 2, 256,
                            [x, np.zeros(300, np.int32)])
    [oob] = r["out_of_bounds"]
    assert (oob["array"], oob["index"], oob["shape"]) == ("x", [-1], [300])
    assert oob["thread"] == [0, 0, 0] and oob["block"] == [0, 0, 0]
    assert oob["line"] == line_of("scan_wraps_negative.py", "        left = x[i - 1]")


def test_a_write_past_a_shared_array_is_found():
    r = instrumented_launch(load("shared_out_of_bounds.py").kernel, 1, 65,
                            [f32(65), np.zeros(65, np.float32)])
    [oob] = r["out_of_bounds"]
    assert (oob["space"], oob["access"], oob["array"]) == ("shared", "write", "buf")
    assert (oob["index"], oob["shape"], oob["thread"]) == ([64], [64], [64, 0, 0])
    assert oob["line"] == line_of("shared_out_of_bounds.py", "buf[tid] = x[tid]")


@pytest.mark.parametrize("name", [n for n in exercises.names()
                                  if exercises.get(n).diagnose is not None])
def test_the_solutions_stay_inside_their_arrays_at_every_graded_size(name, request):
    simulator_in_process(request)
    from numba import cuda

    from autograder.child.cases import run_instrumented
    from autograder.child.contract import import_submission, resolve

    ex = exercises.get(name)
    path = str(exercises.solution_path(ex))
    kernel, consts = resolve(import_submission(path, guard=False), ex.contract, path, "sim")
    cases = [c for c in plan.make_cases(ex, 11) if c.spec.sim]
    for case in plan.evidence_cases(ex, cases, 11):
        r = run_instrumented(cuda, kernel, ex.contract, consts, case)
        assert r["out_of_bounds"] == [] and r["error"] is None, case.params
        assert r["params"] == case.params


def test_in_a_fresh_interpreter_the_solutions_stay_inside():
    """The solutions' check resolves their kernels as the simulator child does: where a parallel
    run imported Numba for a GPU target first, it runs again here."""
    run_file_on_the_simulator(__file__, minimum=6, select="stay_inside and not fresh")


def test_blocks_run_include_the_first_and_the_last_in_every_dimension():
    picked = select_blocks((3, 4, 1), 2)
    assert picked == [(0, 0, 0), (2, 3, 0)]
    picked = select_blocks((3, 4, 1), 4)
    assert {(0, 0, 0), (2, 3, 0), (2, 0, 0), (0, 3, 0)} == set(picked)
    assert picked == sorted(picked)   # the simulator's order


def _report(params, **findings):
    base = {"params": params, "blocks_run": 2, "blocks_total": 4, "error": None,
            "divergent_barriers": [], "races": [], "out_of_bounds": []}
    return base | findings


def test_findings_of_every_run_are_merged_each_naming_its_size():
    race = {"kind": "WAR", "array": "scan", "first": {"line": 20, "access": "read",
                                                       "thread": [8, 0, 0]},
            "second": {"line": 22, "access": "write", "thread": [0, 0, 0]}}
    merged = diagnostics.merged([_report({"n": 1499}), _report({"n": 1201}, races=[race]),
                                 _report({"n": 1301}, races=[race])])
    assert merged["params"] == {"n": 1499}   # the rest is the published size's report
    assert [r["params"] for r in merged["runs"]] == [{"n": 1499}, {"n": 1201}, {"n": 1301}]
    [found] = merged["races"]
    assert found["params"] == {"n": 1201}
    ex = exercises.get("block_scan")
    # (this made-up report has no use counts: concept_use's own problem is left out here)
    grading = Grading(exercise=ex, source=Source("x.py", ""), backend="sim")
    [problem] = [p for p in diagnostics.concept_problems(grading, merged, {}) if "race" in p]
    assert "line 20" in problem and "line 22" in problem and "at n 1201" in problem


def test_an_out_of_bounds_finding_fails_the_concept_with_a_message_to_act_on():
    oob = {"array": "A", "space": "global", "access": "read", "index": [16, 3],
           "shape": [16, 16], "line": 14, "thread": [3, 15, 0], "block": [0, 1, 0]}
    report = diagnostics.merged([_report({"width": 16}, out_of_bounds=[oob])])
    grading = Grading(exercise=exercises.get("tiled_matmul"), source=Source("x.py", ""),
                      backend="sim")
    problem = diagnostics.concept_problems(grading, report, {})[0]  # bounds first
    assert problem.startswith("line 14: reads A[16, 3], but A has shape (16, 16)")
    assert "at width 16" in problem and "add a bounds check" in problem


def test_the_instrumented_runs_are_the_graded_cases_with_their_own_inputs():
    ex = exercises.get("tiled_matmul")
    cases = plan.make_cases(ex, 5)
    evidence = plan.evidence_cases(ex, cases, 5)
    assert [e.id for e in evidence] == [c.id for c in cases]
    for e, c in zip(evidence, cases):
        assert e.params == c.spec.params and e.inputs["A"] is c.inputs["A"]
        assert e.max_blocks == ex.diagnose.max_blocks and 0 <= e.block_draw < 1
    assert [e.block_draw for e in plan.evidence_cases(ex, cases, 5)] == \
        [e.block_draw for e in evidence]   # the seed decides


_CEIL = re.compile(r"ceil\((\w+) / (\w+)\)")


@pytest.mark.parametrize("name", [n for n in exercises.names()
                                  if exercises.get(n).diagnose is not None])
def test_every_grid_dimension_ends_in_a_partial_block_at_some_simulated_size(name):
    """For every legal tile or block width, some graded size the simulator runs is not a
    multiple of it: the instrumented runs' last block holds the boundary, where guards are
    needed."""
    ex = exercises.get(name)
    consts = {c.name: c for c in ex.contract.constants}
    sizes = [c.params for c in ex.cases if c.sim]
    for expr in ex.contract.grid:
        m = _CEIL.fullmatch(expr)
        assert m, expr
        param, const = m.groups()
        c = consts[const]
        widths = [v for v in range(max(2, c.low), c.high + 1)
                  if not c.power_of_two or v & (v - 1) == 0]
        for v in widths:
            assert any(params[param] % v for params in sizes), (param, v)


def test_a_negative_literal_subscript_is_wrap_around_asked_for():
    x, A = f32(8), f32(8, 5, seed=1)
    out = np.zeros(8, np.float32)
    r = instrumented_launch(load("last_element_on_purpose.py").kernel, 1, 8, [x, A, out])
    assert r["out_of_bounds"] == [] and r["error"] is None
    np.testing.assert_allclose(out, np.roll(x, 1) + A[:, -1])


@pytest.mark.parametrize("kernel", ["weighted", "weighted_shared"])
def test_iterating_over_an_array_reads_its_elements_at_the_for_line(kernel):
    """``for j, m in enumerate(w)`` (Numba's GPU target reads w[0..len-1]): Python iterated the
    proxy by ``w[0], w[1], ...`` until an ``IndexError``, so ``w[len]`` was recorded out of bounds,
    at a line of the grader's loop hook (``trace.py``), and the loads of ``w`` were counted there
    (red team g3: an honest kernel lost its concept points)."""
    module = load("weights_iterated.py")
    x, w, y = f32(36), f32(module.WIDTH, seed=1), np.zeros(32, np.float32)
    r = instrumented_launch(getattr(module, kernel), 1, 32, [x, w, y])
    assert r["out_of_bounds"] == [] and r["error"] is None
    assert np.allclose(y, [np.dot(w, x[i:i + module.WIDTH]) for i in range(32)])
    lines = r["global_loads"]["by_line"]
    assert all("file" not in entry for entry in lines), lines
    if kernel == "weighted":   # each thread reads every weight, at the for line
        for_line = line_of("weights_iterated.py", "in enumerate(w):")
        assert {"line": for_line, "loads": 32 * module.WIDTH} in lines, lines
