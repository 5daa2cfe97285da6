"""The grader's occupancy calculator (autograder.judge.occupancy_calculator), which the performance hints use,
against the ``occupancy`` exercise's instructor solution; and the exercise's public expected
values, which a student's install uses in place of the solution."""

from __future__ import annotations

import importlib.util
import itertools

import pytest

from autograder import exercises
from autograder.judge import hints
from autograder.judge import occupancy_calculator as occ
from autograder.errors import GraderSetupError

occupancy_exercise = exercises.module("occupancy")

from conftest import SOLUTIONS

# (max threads, max blocks, shared bytes) per SM: Fermi, Turing, Volta, Ampere, Hopper
SMS = [(1536, 8, 48 * 1024), (1024, 16, 64 * 1024), (2048, 32, 96 * 1024),
       (2048, 32, 164 * 1024), (2048, 32, 228 * 1024)]
THREADS = [1, 31, 32, 33, 48, 64, 96, 100, 128, 192, 256, 320, 384, 512, 640, 768, 1000, 1024,
           1536, 2048]
SHARED = [0, 1, 2048, 4100, 8 * 1024, 16 * 1024, 48 * 1024, 100 * 1024, 200 * 1024]


@pytest.fixture(scope="module")
def solution():
    spec = importlib.util.spec_from_file_location(
        "occupancy_solution_for_test", SOLUTIONS / "occupancy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_calculator_agrees_with_the_instructor_solution(solution):
    checked = 0
    for sm, threads, shared in itertools.product(SMS, THREADS, SHARED):
        got = occ.resident_blocks(threads, shared, *sm)
        assert got.blocks == solution.resident_blocks_per_sm(threads, shared, *sm), \
            (sm, threads, shared, got)
        assert occ.warps_per_block(threads) == solution.warps_per_block(threads)
        checked += 1
    assert checked == len(SMS) * len(THREADS) * len(SHARED)


@pytest.mark.parametrize("args, expected", [
    ((256, 0, 2048, 32, 228 * 1024), (8, "threads")),        # Hopper: thread slots
    ((32, 0, 2048, 32, 228 * 1024), (32, "blocks")),         # 64 fit by threads, 32 slots
    ((256, 48 * 1024, 2048, 32, 228 * 1024), (4, "shared")),
    ((2048, 0, 1536, 8, 48 * 1024), (0, "threads")),         # does not fit at all
    ((256, 0, 2048, 32, 228 * 1024, 128), (2, "registers")),  # 128 registers: 4096 per warp
    ((256, 0, 2048, 32, 228 * 1024, 32), (8, "threads")),    # registers not the tightest
    # block sizes off the warp size: whole warps count, each limit binding in turn
    ((100, 0, 2048, 32, 228 * 1024), (16, "threads")),       # 128 slots each, not 100: not 20
    ((200, 0, 1536, 8, 48 * 1024), (6, "threads")),          # Fermi: 224 slots each, not 7
    ((20, 0, 2048, 32, 228 * 1024), (32, "blocks")),         # one warp each: 64 fit by threads
    ((100, 40 * 1024, 2048, 32, 228 * 1024), (5, "shared")),
    ((100, 0, 2048, 32, 228 * 1024, 128), (4, "registers")),  # 4096 per warp: 16 warps, 4 each
    ((1000, 0, 1000, 8, 48 * 1024), (0, "threads")),         # 1024 slots: does not fit
    ((96, 0, 2048, 32, 228 * 1024, None, 64 * 1024, 64), (16, "threads")),  # warps of 64
])
def test_which_limit_binds(args, expected):
    assert occ.resident_blocks(*args) == expected


def test_registers_are_given_in_units_of_256_per_warp():
    # 33 registers × 32 lanes = 1056, rounded up to 1280 per warp: 51 warps, 6 blocks of 8
    assert occ.blocks_by_registers(256, 33) == 6
    assert occ.blocks_by_registers(256, None) == occ.UNLIMITED


def test_hints_use_it_without_any_solution(monkeypatch):
    """The hints' occupancy needs no instructor solution (an installed kernelgrade has none)."""
    def missing(exercise):
        raise FileNotFoundError("no solutions here")

    monkeypatch.setattr(exercises, "solution_path", missing)
    assert hints.occupancy(256, 48 * 1024, hints.SM_LIMITS[(9, 0)]) == (4, "shared")


def test_public_cases_carry_the_solutions_values(solution):
    ex = exercises.get("occupancy")
    public = [c for c in ex.cases if c.visibility == "public"]
    assert public and len(occupancy_exercise.PUBLIC_EXPECTED) == len(public)
    for c in public:
        want = getattr(solution, c.params["call"])(**c.params["args"])
        assert ex.reference({}, c.params) == {"value": want}, c.label


def test_hidden_cases_need_the_solution_and_say_so(monkeypatch):
    ex = exercises.get("occupancy")
    hidden = next(c for c in ex.cases if c.visibility == "hidden"
                  and not c.params.get("against_driver"))
    monkeypatch.delenv(exercises.SOLUTIONS_ENV, raising=False)
    monkeypatch.setattr(exercises, "SOLUTIONS_FOLDER", "nowhere")
    with pytest.raises(GraderSetupError, match=exercises.SOLUTIONS_ENV):
        ex.reference({}, hidden.params)
    public = next(c for c in ex.cases if c.visibility == "public")
    assert ex.reference({}, public.params)["value"] == 512
