"""Exercise ``occupancy``: thread scheduling and block granularity, as counts.

Source: lecture 2.1 (warps, block granularity) and "Shared Memory and Threading". The submission
defines plain Python functions (no kernel); public tests use the lecture's Fermi numbers
(1536 threads and 8 blocks per SM: 8×8 blocks → 512 threads per SM, 16×16 → 1536, 32×32 → 1024;
a 16×16 tile pair uses 2 KB of shared memory), hidden tests other limits and current GPUs.

Functions (all arguments ints; sizes in threads and bytes):
``warps_per_block(threads_per_block, warp_size=32) -> int``;
``resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
max_blocks_per_sm, shared_bytes_per_sm, warp_size=32) -> int`` (0 when a block does not fit);
``resident_threads_per_sm(...same...) -> int``; ``tile_shared_bytes(tile_width,
bytes_per_element=4) -> int``; ``global_traffic_reduction(tile_width) -> float``.
On a GPU four more cases fill in the device's own limits and compare ``resident_blocks_per_sm``
with the CUDA driver's occupancy calculator for a real kernel (skipped on the simulator).

For each function that takes a block size and the SM's limits, hidden cases use block sizes that
are not a multiple of the warp size (32, and 64 for ``warp_size=64``) where each limit in turn
binds strictly: the thread slots (there a count that ignores whole warps is wrong), the block
slots and shared memory (``tests/test_occupancy_cases.py`` checks it). Every case is worth 4
points; 100 in all.

Public cases carry their expected values here (:data:`PUBLIC_EXPECTED`: the lecture's numbers),
so a student's install, which has no instructor solution, runs them; hidden cases take theirs
from the instructor solution (:func:`reference`).
"""

from __future__ import annotations

import importlib.util

from autograder.errors import GraderSetupError
from autograder.define import Case, Contract, Exercise

FUNCTIONS = ("warps_per_block", "resident_blocks_per_sm", "resident_threads_per_sm",
             "tile_shared_bytes", "global_traffic_reduction")

CONTRACT = Contract(kernel="", constants=(), args=(), signature=(), functions=FUNCTIONS)

# (max threads per SM, max blocks per SM, shared bytes per SM)
FERMI = (1536, 8, 48 * 1024)
TURING = (1024, 16, 64 * 1024)
VOLTA = (2048, 32, 96 * 1024)
HOPPER = (2048, 32, 228 * 1024)  # H100 / H200

#: Points of every case: 25 cases (5 public, 16 hidden the simulator runs, 4 compared with the
#: driver), 100 in all. One value for all: the notebook's grading table says "N points each".
POINTS = 4.0


def _sm(threads, shared, limits, warp_size=None):
    args = {"threads_per_block": threads, "shared_bytes_per_block": shared,
            "max_threads_per_sm": limits[0], "max_blocks_per_sm": limits[1],
            "shared_bytes_per_sm": limits[2]}
    return args if warp_size is None else {**args, "warp_size": warp_size}


#: Expected values of the public cases, by :func:`_key` of their call: written out here, so the
#: public tests need no instructor solution.
PUBLIC_EXPECTED: dict[tuple, int | float] = {}


def _key(call: str, args: dict) -> tuple:
    return (call, tuple(sorted(args.items())))


def _case(call, args, label, visibility="hidden", expected=None):
    if visibility == "public":
        if expected is None:
            raise ValueError(f"public case {label!r} needs its expected value")
        PUBLIC_EXPECTED[_key(call, args)] = expected
    return Case({"call": call, "args": args}, points=POINTS, visibility=visibility, label=label)


CASES = [
    _case("resident_threads_per_sm", _sm(64, 0, FERMI), "Fermi, 8×8 blocks → 512 threads",
          "public", expected=512),
    _case("resident_threads_per_sm", _sm(256, 0, FERMI), "Fermi, 16×16 blocks → 1536 threads",
          "public", expected=1536),
    _case("resident_threads_per_sm", _sm(1024, 0, FERMI), "Fermi, 32×32 blocks → 1024 threads",
          "public", expected=1024),
    _case("tile_shared_bytes", {"tile_width": 16}, "16×16 tiles use 2 KB", "public",
          expected=2048),
    _case("warps_per_block", {"threads_per_block": 256}, "256 threads are 8 warps", "public",
          expected=8),
    _case("warps_per_block", {"threads_per_block": 100}, "a partial warp counts whole"),
    _case("warps_per_block", {"threads_per_block": 96, "warp_size": 64},
          "96 threads in warps of 64 are 2 warps"),
    _case("resident_blocks_per_sm", _sm(256, 48 * 1024, HOPPER), "Hopper, 48 KB per block: shared-limited"),
    _case("resident_blocks_per_sm", _sm(2048, 0, FERMI), "a block larger than the SM holds: 0"),
    _case("tile_shared_bytes", {"tile_width": 32, "bytes_per_element": 8}, "32×32 double tiles"),
    _case("global_traffic_reduction", {"tile_width": 16}, "16×16 tiles"),
    # A second size for each of the two formulas: one case each let a constant (16.0) or a
    # formula that ignores bytes_per_element (tile_width**3 // 2) through.
    _case("tile_shared_bytes", {"tile_width": 24}, "24×24 float tiles"),
    _case("global_traffic_reduction", {"tile_width": 8}, "8×8 tiles"),
    # Block sizes that are not a multiple of the warp size, each limit binding in turn (strictly:
    # the other two allow more blocks).
    _case("resident_blocks_per_sm", _sm(100, 0, HOPPER),
          "Hopper, 100 threads: 4 whole warps each, thread-limited"),
    _case("resident_blocks_per_sm", _sm(20, 0, HOPPER),
          "Hopper, 20 threads: one whole warp each, block-limited"),
    _case("resident_blocks_per_sm", _sm(100, 40 * 1024, HOPPER),
          "Hopper, 100 threads and 40 KB per block: shared-limited"),
    _case("resident_threads_per_sm", _sm(200, 0, VOLTA),
          "Volta, 200 threads: 7 whole warps each, thread-limited"),
    _case("resident_threads_per_sm", _sm(20, 1024, TURING),
          "Turing, 20 threads and 1 KB per block: block-limited"),
    _case("resident_threads_per_sm", _sm(200, 30 * 1024, VOLTA),
          "Volta, 200 threads and 30 KB per block: shared-limited"),
    # warp_size is an argument: warps of 64 threads, block sizes a multiple of 32 but not of 64.
    _case("resident_blocks_per_sm", _sm(96, 0, HOPPER, warp_size=64),
          "Hopper's limits, warps of 64, 96 threads: thread-limited"),
    _case("resident_threads_per_sm", _sm(160, 0, VOLTA, warp_size=64),
          "Volta's limits, warps of 64, 160 threads: thread-limited"),
]


def _driver_case(threads: int) -> Case:
    """On a GPU: this device's limits, compared with the driver's occupancy calculator for a
    small kernel (few registers, no shared memory) at ``threads`` per block. The grader asks the
    driver in a process of its own and adds the limits to the arguments
    (:func:`autograder.grading.driver_occupancy.fill`): the child never sees the answer."""
    return Case({"call": "resident_blocks_per_sm", "against_driver": True,
                 "args": {"threads_per_block": threads, "shared_bytes_per_block": 0}},
                points=POINTS, sim=False,
                label=f"this GPU, {threads} threads: the driver's occupancy calculator agrees",
                why_gpu="needs a GPU: compared with the CUDA driver's occupancy calculator")


# 100 threads: 4 whole warps (128 thread slots), thread-limited on every GPU since Volta, where a
# count that ignores whole warps is wrong; 48: 2 whole warps, as many as the block slots allow on
# a Hopper.
CASES += [_driver_case(t) for t in (1024, 48, 640, 100)]


def _solution():
    """The instructor solution, imported from :func:`autograder.exercises.solution_path`.
    Raises :class:`autograder.errors.GraderSetupError` when there is none (an installed
    kernelgrade without ``$KERNELGRADE_SOLUTIONS``): a hidden case cannot be judged then."""
    from autograder.exercises import solution_path

    try:
        path = solution_path(EXERCISE)
    except FileNotFoundError as exc:
        raise GraderSetupError(str(exc)) from None
    spec = importlib.util.spec_from_file_location("occupancy_solution", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(inputs, params):
    """``{"value": ...}``, what the case's call must return: a public case's value from
    :data:`PUBLIC_EXPECTED`, a hidden case's from the instructor solution (raises
    :class:`~autograder.errors.GraderSetupError` when it is not installed). A case compared
    with the driver gets its value from :func:`autograder.grading.driver_occupancy.fill`, never here
    (raises :class:`~autograder.errors.GraderSetupError`)."""
    if params.get("against_driver"):
        raise GraderSetupError("the driver's occupancy calculator was not asked for this case "
                               "(autograder.grading.driver_occupancy.fill)")
    key = _key(params["call"], params["args"])
    if key in PUBLIC_EXPECTED:
        return {"value": PUBLIC_EXPECTED[key]}
    return {"value": getattr(_solution(), params["call"])(**params["args"])}


CONTRACT_TEXT = """\
- All arguments are ints; sizes in threads and bytes.
- `warps_per_block(threads_per_block, warp_size=32) -> int`.
- `resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
  max_blocks_per_sm, shared_bytes_per_sm, warp_size=32) -> int` (0 when a block does not fit).
- `resident_threads_per_sm(...the same arguments...) -> int`.
- `tile_shared_bytes(tile_width, bytes_per_element=4) -> int`.
- `global_traffic_reduction(tile_width) -> float`.
- Block sizes need not be a multiple of the warp size, and `warp_size` need not be 32: the
  hidden cases use both.
- Result: exact for ints, relative 1e-9 for floats. On a GPU, `resident_blocks_per_sm` is also
  compared with the CUDA driver's occupancy calculator for a real kernel.
"""

EXERCISE = Exercise(
    name="occupancy",
    number=7,
    title="Occupancy: warps, block granularity and resident threads",
    source='lecture 2.1 (thread scheduling, block granularity) and "Shared Memory and Threading"',
    contract=CONTRACT,
    cases=CASES,
    make_inputs=lambda params, rng: {},
    outputs=lambda params: {},
    reference=reference,
    contract_text=CONTRACT_TEXT,
)
