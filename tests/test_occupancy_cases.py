"""The ``occupancy`` exercise's hidden cases test every function that takes a block size and an
SM's limits with block sizes that are not a multiple of the warp size, where each limit in turn
(thread slots, block slots, shared memory) binds strictly; and a function that ignores warp
granularity in any one of them loses points. Nothing is graded in a child here: the cases'
calls are made in this process against their expected values (``tests/test_exercises.py``
grades the known-bad files of ``mutants/`` as a student's).
"""

from __future__ import annotations

import importlib.util
import inspect
from dataclasses import replace
from pathlib import Path

import pytest

from autograder import exercises
from autograder.judge import occupancy_calculator as occ
from conftest import SOLUTIONS

LIMITS = ("threads", "blocks", "shared")
LIMIT_ARGS = ("threads_per_block", "shared_bytes_per_block", "max_threads_per_sm",
              "max_blocks_per_sm", "shared_bytes_per_sm")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def solution():
    return _load(SOLUTIONS / "occupancy.py", "occupancy_solution_for_cases")


def _sim_hidden(cases) -> list:
    """The hidden cases the simulator runs (the driver's cases need a GPU's answers)."""
    return [c for c in cases if c.visibility == "hidden" and c.sim
            and not c.params.get("against_driver")]


def _limits_of(args: dict) -> dict[str, int]:
    """Blocks per SM that each limit alone allows (:mod:`occupancy_calculator`'s terms)."""
    warp = args.get("warp_size", occ.WARP_SIZE)
    return {"threads": occ.blocks_by_threads(args["threads_per_block"],
                                             args["max_threads_per_sm"], warp),
            "blocks": args["max_blocks_per_sm"],
            "shared": occ.blocks_by_shared(args["shared_bytes_per_block"],
                                           args["shared_bytes_per_sm"])}


def _strictly_binding(args: dict) -> str | None:
    """The limit that is strictly tighter than the other two, or None (a tie, or no block
    fits)."""
    by = _limits_of(args)
    least = min(by.values())
    tight = [k for k, v in by.items() if v == least]
    return tight[0] if len(tight) == 1 and least > 0 else None


def _ignoring_warps(args: dict) -> int:
    """Resident blocks by a count that gives a block only its own threads' slots."""
    by = _limits_of(args)
    return min(args["max_threads_per_sm"] // args["threads_per_block"], by["blocks"],
               by["shared"])


def _limited_functions(solution) -> list[str]:
    """The contract's functions that take a block size and an SM's limits."""
    fns = exercises.module("occupancy").FUNCTIONS
    return [f for f in fns
            if set(LIMIT_ARGS) <= set(inspect.signature(getattr(solution, f)).parameters)]


def coverage_gaps(cases, solution) -> list[str]:
    """What the hidden simulator cases ``cases`` leave untested: for each function of the
    contract that takes ``threads_per_block``, a block size that is not a multiple of the warp
    size; for those that also take the SM's limits, such a block size where each limit binds
    strictly, and where the thread slots bind, a count that ignores whole warps is wrong; and
    one such case where the block slots bind while the block uses shared memory (with none, a
    count that puts the block limit in shared memory's place misses the limit unseen)."""
    fns = exercises.module("occupancy").FUNCTIONS
    hidden = _sim_hidden(cases)
    gaps = []
    blocks_with_shared = False
    for fn in fns:
        params = inspect.signature(getattr(solution, fn)).parameters
        if "threads_per_block" not in params:
            continue
        ragged = [c.params["args"] for c in hidden if c.params["call"] == fn
                  and c.params["args"]["threads_per_block"]
                  % c.params["args"].get("warp_size", occ.WARP_SIZE)]
        if not ragged:
            gaps.append(f"{fn}: no block size that is not a multiple of the warp size")
        if fn not in _limited_functions(solution):
            continue
        for limit in LIMITS:
            binding = [a for a in ragged if _strictly_binding(a) == limit]
            if limit == "blocks":
                blocks_with_shared |= any(a["shared_bytes_per_block"] > 0 for a in binding)
            if not binding:
                gaps.append(f"{fn}: no ragged block size where the {limit} limit binds")
            elif limit == "threads" and not any(
                    _ignoring_warps(a) != occ.resident_blocks(
                        a["threads_per_block"], a["shared_bytes_per_block"],
                        a["max_threads_per_sm"], a["max_blocks_per_sm"],
                        a["shared_bytes_per_sm"],
                        warp_size=a.get("warp_size", occ.WARP_SIZE)).blocks
                    for a in binding):
                gaps.append(f"{fn}: where the thread slots bind, ignoring whole warps gives the "
                            "same count")
    if not blocks_with_shared:
        gaps.append("no ragged block size where the block slots bind and the block uses shared "
                    "memory")
    return gaps


def test_each_limit_binds_in_turn_at_block_sizes_off_the_warp_size(solution):
    ex = exercises.get("occupancy")
    assert coverage_gaps(ex.cases, solution) == []
    assert _limited_functions(solution) == ["resident_blocks_per_sm", "resident_threads_per_sm"]


def test_the_gap_finder_sees_a_missing_limit(solution):
    """Without the hidden cases where the thread slots bind, the gap is named (the check can
    fail)."""
    ex = exercises.get("occupancy")
    kept = [c for c in ex.cases if not (c.params["call"] == "resident_threads_per_sm"
                                        and _strictly_binding(c.params["args"]) == "threads")]
    assert coverage_gaps(kept, solution) == [
        "resident_threads_per_sm: no ragged block size where the threads limit binds"]


def test_the_calculator_agrees_with_the_solution_on_every_case(solution):
    """The grader's calculator (hints) and the instructor solution give each hidden case's count
    alike, warp sizes other than 32 included."""
    ex = exercises.get("occupancy")
    for c in _sim_hidden(ex.cases):
        args = c.params["args"]
        if c.params["call"] != "resident_blocks_per_sm":
            continue
        want = solution.resident_blocks_per_sm(**args)
        assert occ.resident_blocks(**args).blocks == want, c.label


def _ignoring_warps_in(fn: str, solution):
    """The solution with ``fn`` replaced by one that gives a block only its threads' slots."""
    def blocks(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
               max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
        return _ignoring_warps(dict(
            threads_per_block=threads_per_block, shared_bytes_per_block=shared_bytes_per_block,
            max_threads_per_sm=max_threads_per_sm, max_blocks_per_sm=max_blocks_per_sm,
            shared_bytes_per_sm=shared_bytes_per_sm, warp_size=warp_size))

    def threads(threads_per_block, *args, **kw):
        return threads_per_block * blocks(threads_per_block, *args, **kw)

    made = {f: getattr(solution, f) for f in exercises.module("occupancy").FUNCTIONS}
    made[fn] = blocks if fn == "resident_blocks_per_sm" else threads
    return made


@pytest.mark.parametrize("fn", ["resident_blocks_per_sm", "resident_threads_per_sm"])
def test_a_function_that_ignores_warp_granularity_loses_hidden_points(fn, solution):
    ex = exercises.get("occupancy")
    made = _ignoring_warps_in(fn, solution)
    lost = [c.label for c in _sim_hidden(ex.cases)
            if made[c.params["call"]](**c.params["args"])
            != ex.reference({}, c.params)["value"]]
    assert any(c.label in lost for c in ex.cases if c.params["call"] == fn), lost
    public = [c for c in ex.cases if c.visibility == "public"]
    assert all(made[c.params["call"]](**c.params["args"]) == ex.reference({}, c.params)["value"]
               for c in public)  # the public cases alone let it through: the hidden ones catch it


def test_the_driver_cases_include_a_thread_bound_ragged_block():
    """On a GPU the driver's calculator is asked at a block size off the warp size where the
    thread slots bind on every GPU since Volta (2048 thread slots, 32 block slots)."""
    ex = exercises.get("occupancy")
    sizes = {c.params["args"]["threads_per_block"] for c in ex.cases
             if c.params.get("against_driver")}
    volta = {"max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "shared_bytes_per_sm": 0,
             "shared_bytes_per_block": 0}
    assert [t for t in sizes if t % occ.WARP_SIZE
            and _strictly_binding(dict(volta, threads_per_block=t)) == "threads"]


def test_the_gap_finder_sees_a_block_limit_met_only_without_shared_memory(solution):
    """The same cases with no shared memory where the block slots bind: the gap is named."""
    ex = exercises.get("occupancy")

    def without_shared(c):
        args = c.params["args"]
        if c.params.get("against_driver") or "max_blocks_per_sm" not in args \
                or _strictly_binding(args) != "blocks":
            return c
        return replace(c, params={**c.params, "args": {**args, "shared_bytes_per_block": 0}})

    assert coverage_gaps([without_shared(c) for c in ex.cases], solution) == [
        "no ragged block size where the block slots bind and the block uses shared memory"]


def test_the_exercise_keeps_its_total_with_one_value_per_case():
    """100 points, every case worth the same (the notebook's table says "N points each")."""
    ex = exercises.get("occupancy")
    assert sum(c.points for c in ex.cases) == ex.max_score == 100
    assert len({c.points for c in ex.cases}) == 1
