"""What an exercise is: a contract the child process can see, and grading data it cannot.

An exercise folder's ``exercise.py`` defines one :class:`Exercise` (see
:mod:`autograder.exercises` for the folder's other files); the harness and the grader are shared.

* :class:`Contract` (with its :class:`Constant` items) is public (it restates CONTRACTS.md): the
  names a submission defines, the launch rule, the argument layout. It is the one part of an
  exercise a child receives, so it lives with the wire's formats
  (:mod:`autograder.wire.contract`) and is imported here for the definitions.
* Cases, tolerances, points, the reference and the secret seed stay in the grader's process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from autograder.wire.contract import Constant, Contract

__all__ = ["Case", "Concept", "Constant", "Contract", "Diagnose", "Exercise", "Timing",
           "Tolerance", "Use", "TIMING_FLOAT_RANGE", "TIMING_INT_RANGE", "check_input_ranges"]


@dataclass(frozen=True)
class Case:
    """One correctness test: parameters (sizes), visibility and points.

    ``sim`` is False for sizes too slow for the simulator (one Python thread per CUDA thread);
    those run on a GPU only and are reported ``skipped`` on the simulator.
    """

    params: dict
    points: float
    visibility: str = "hidden"
    sim: bool = True
    label: str = ""
    why_gpu: str = ""  # why a ``sim=False`` case needs a GPU, when not its size

    @property
    def name(self) -> str:
        label = self.label or ", ".join(f"{k} {v}" for k, v in self.params.items())
        return f"{self.visibility}: {label}"


@dataclass(frozen=True)
class Use:
    """What the instrumented runs (:class:`Diagnose`) must show of shared memory's use, not just
    its presence, compared with the instructor's kernel at the same case and constants.

    Each ``*_per_output`` / ``reads_by_one_thread`` function takes a graded case's parameters
    with the submission's constants added (``{"width": 33, "TILE_WIDTH": 16}``) and returns the
    instructor's count there (None: not judged); the bounds are judged at every graded case's
    instrumented run, and a test checks every solution meets them with margin at every graded
    size. The grader judges the counts the child reports; the child never sees them.

    The bounds are one-sided so that doing the work with less traffic than the instructor's
    kernel never fails them: traffic (global loads, one thread's shared reads) and serial work
    have upper bounds; what must reach a lower bound is the data flow (``taint``), which does not
    shrink when the traffic does.

    - ``loads_per_output``: reads of global memory of the arrays ``tiled`` per output element
      written, whatever makes them (plain loads, atomics of any kind, methods reading the array);
      the submission may make at most ``load_factor`` times as many (a tiled kernel reuses);
    - ``block_loads``: ``(params, block index) -> loads``, the instructor's loads of ``tiled`` in
      one block of the case's grid; when given, loads are judged block by block instead, each
      block run at most ``load_factor`` times it (the instrumented runs sample edge blocks,
      whose loads serve few outputs: a matmul's corner block loads a row of A and a column of
      B for one element of C, as many per output as a naive kernel);
    - ``shared_inputs_per_output``: input elements each output's value depends on that reached
      it through shared memory written by *another* thread of its block (each counted once, the
      data followed through arithmetic, registers, shared and local arrays:
      :mod:`autograder.instrument.taint`), on average over the outputs written; at least
      ``read_fraction`` of it. Give the instructor's count at the case's block with the fewest
      (a partial last block, a corner tile, a row's end): the runs sample edge blocks. It does
      not fall with traffic: a block sum that adds two elements while it loads halves its shared
      reads and keeps its 255 inputs of 256 through other threads. ``shared_reads_per_output`` is
      its former name (it counted cross-thread shared reads, a lower bound on traffic) and is
      read as this one;
    - ``reads_by_one_thread``: the most shared reads one thread makes in a block; at most
      ``thread_reads_factor`` times it (a tree, not a serial loop in one thread);
    - ``steps_per_output``: the longest chain of operations, each combining two values computed
      from loaded inputs, behind any output (a tree sum of n values log2(n) deep, a serial sum
      n - 1, whether it reads shared or global memory); at most ``steps_factor`` times it;
    - ``ordering_barriers``: ``cuda.syncthreads()`` lines that separate a thread's shared write
      from another thread's read of it (or a read from another thread's later write);
    - ``outputs_from_shared``: the output elements whose every input reached them through shared
      memory written by another thread (a transpose stores B from the tile another thread
      loaded, not from its own load or its own slot): True, at least half of them; or a function
      of the case giving the instructor's fraction (as ``shared_inputs_per_output``), at least
      half of that;
    - ``how``: what to do instead, ending the loads' and reads' messages.
    """

    tiled: tuple[str, ...] = ()
    loads_per_output: Callable[[dict], float] | None = None
    block_loads: Callable[[dict, tuple], float] | None = None
    shared_inputs_per_output: Callable[[dict], float] | None = None
    reads_by_one_thread: Callable[[dict], float] | None = None
    steps_per_output: Callable[[dict], float] | None = None
    ordering_barriers: int = 0
    outputs_from_shared: bool | Callable[[dict], float] = False
    how: str = ""
    load_factor: float = 1.5
    read_fraction: float = 0.5
    thread_reads_factor: float = 2.0
    steps_factor: float = 3.0
    shared_reads_per_output: Callable[[dict], float] | None = None

    def __post_init__(self):
        if self.shared_inputs_per_output is None and self.shared_reads_per_output is not None:
            object.__setattr__(self, "shared_inputs_per_output", self.shared_reads_per_output)


@dataclass(frozen=True)
class Concept:
    """A concept test read off the kernel's PTX, compiled from the student's source, and (with
    ``use``) off the instrumented run's counts.

    ``min_shared_bytes``: shared memory the kernel must declare; ``min_barriers``: how many
    ``bar.sync`` instructions (``cuda.syncthreads()`` call sites) it must contain;
    ``min_atomics`` / ``min_fences``: atomic instructions and device-wide memory fences
    (``cuda.threadfence()``) it must contain; ``fenced_atomics``: every atomic must have a fence
    before it since the last barrier (a block's writes are ordered before it arrives) and one
    after it before the next barrier (what other blocks wrote is seen after the wait), in the
    PTX's order (the grid barriers);
    ``use``: how the kernel must use its shared memory and barriers (:class:`Use`; None:
    presence is enough).
    """

    description: str
    points: float
    summary: str = ""  # a few words for the notebook's concept cell ("tiles in shared memory")
    min_shared_bytes: int = 0
    min_barriers: int = 0
    min_atomics: int = 0
    min_fences: int = 0
    fenced_atomics: bool = False
    use: Use | None = None


@dataclass(frozen=True)
class Diagnose:
    """What outputs alone miss, looked for at the launches that earn the points, on both
    backends: an instrumented simulator launch (:mod:`autograder.instrument`) at every graded
    case the backend runs (on a GPU the GPU-only ``sim=False`` sizes too), with that case's own
    size and inputs, and, on a GPU with compute-sanitizer, racecheck, synccheck and memcheck at
    the graded cases (:func:`autograder.grading.plan.sanitizer_cases`). No analysis runs at a
    size of its own, which a kernel could recognise.

    Each instrumented launch runs ``max_blocks`` blocks of the case's grid (all of them when it
    has no more): the edge blocks first (the last block, partial in every dimension, then the
    first and the blocks last in one dimension) and one drawn from the grading's secret seed
    among the others, so a kernel cannot keep its barriers only in the blocks it expects to be
    watched. Each block costs about 0.1-0.3 s of CPU time at a few hundred threads and a few
    tile phases (``benchmarks/evidence_sizes.py``).

    Findings become ``diagnostic`` tests (no points) and fail the concept test: any shared-memory
    race, divergent barrier or out-of-bounds access (an index outside an array's shape, in any
    dimension, negative included), a bank conflict of more than ``max_bank_ways`` ways, or more
    than ``max_divergent_branches`` divergent warp branches per block run (None: not judged), at
    any graded size. Thresholds are set from the instructor solution at the same cases (tests
    check it meets them at every graded size).

    ``params``, ``seeded`` and ``draws`` named the sizes of the instrumented runs before they
    ran at the graded cases (issue 30); they are accepted for a course's older exercise files
    and unused (a ``FutureWarning`` says so).
    """

    max_blocks: int = 3
    max_bank_ways: int | None = None
    max_divergent_branches: int | None = None
    params: dict | None = None
    seeded: dict | None = None
    draws: int | None = None

    def __post_init__(self):
        if self.max_blocks < 1:
            raise ValueError("Diagnose.max_blocks must be at least 1")
        unused = [n for n in ("params", "seeded", "draws") if getattr(self, n) is not None]
        if unused:
            import warnings

            warnings.warn(f"Diagnose({', '.join(f'{n}=' for n in unused)}...) is unused: the "
                          "instrumented runs happen at the graded cases' own sizes and inputs; "
                          "remove it from the exercise", FutureWarning, stacklevel=3)


@dataclass(frozen=True)
class Timing:
    """Timing test policy: the student's kernel against the instructor's, the instructor's at its
    own constants and launch (the fastest of its references on the GPU; issue 30).

    ``params``: the size (chosen so the instructor kernel runs ≥ 1 ms on an H100/H200);
    full points at ``ratio <= full_ratio`` (student time / instructor time), none above
    ``zero_ratio``, linear in between. Sampling (see :mod:`autograder.timing.measure`) takes at least
    ``min_rounds`` rounds and stops at 1 % relative standard error, once the ratio's 95 %
    interval is wholly at or below ``full_ratio`` or at or above ``zero_ratio`` (the points are
    settled), or after ``budget_s`` seconds.
    ``work(params) -> (amount, unit)`` says what one launch does, for the report's achieved
    throughput: (GFLOP, ``"GFLOP/s"``) for a compute-bound kernel, (GB moved to and from DRAM,
    ``"GB/s"``) for a memory-bound one; None: not shown.
    ``input_ranges``: the range of each timing input's values, ``{name: (low, high)}``, half
    open ``[low, high)``, as the exercise's ``make_inputs`` draws them (a histogram of 256 bins
    over uint8 data: ``{"data": (0, 256)}``). The timing inputs are filled on the GPU with
    hashed values (no transfer of gigabytes): an input not named here gets floats in
    :data:`TIMING_FLOAT_RANGE` or integers in :data:`TIMING_INT_RANGE`. An integer range's
    values reach at most ``low + 2**24 - 1``. Raises ``ValueError`` (when the :class:`Exercise`
    is made) for a name that is not an input, an empty range, or an integer range its dtype
    cannot hold.
    """

    params: dict
    points: float
    full_ratio: float = 1.25
    zero_ratio: float = 2.0
    min_rounds: int = 10
    budget_s: float = 8.0
    work: Callable[[dict], tuple[float, str]] | None = None
    input_ranges: dict = field(default_factory=dict)

    def input_range(self, name: str, dtype) -> tuple[float, float]:
        """The ``[low, high)`` range of timing input ``name`` of ``dtype``."""
        if name in self.input_ranges:
            low, high = self.input_ranges[name]
            return low, high
        return TIMING_FLOAT_RANGE if np.dtype(dtype).kind == "f" else TIMING_INT_RANGE


#: The values of a timing input that :attr:`Timing.input_ranges` does not name.
TIMING_FLOAT_RANGE = (0.0, 1.0)
TIMING_INT_RANGE = (0, 1000)


def check_input_ranges(name: str, timing: Timing, specs: dict) -> None:
    """Raise ``ValueError`` naming exercise ``name`` where ``timing.input_ranges`` does not fit
    its timing inputs ``specs`` (name → (shape, dtype), :attr:`Exercise.inputs`)."""
    for arg, rng in timing.input_ranges.items():
        if arg not in specs:
            raise ValueError(f"exercise {name}: Timing.input_ranges names {arg!r}, which is not "
                             f"an input ({', '.join(specs)})")
        low, high = rng
        dtype = np.dtype(specs[arg][1])
        if not low < high:
            raise ValueError(f"exercise {name}: the timing range of {arg} is empty "
                             f"([{low}, {high}))")
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if int(low) != low or int(high) != high or low < info.min or high - 1 > info.max:
                raise ValueError(f"exercise {name}: the timing range of {arg} ([{low}, {high})) "
                                 f"does not hold {dtype} integers ({info.min} to {info.max})")


@dataclass(frozen=True)
class Tolerance:
    """Pass rule for float outputs: relative Frobenius error against float64 ≤ ``rel_frobenius``,
    no NaN. ``exact`` for integer outputs."""

    rel_frobenius: float = 1e-4
    exact: bool = False


@dataclass
class Exercise:
    """One exercise: contract, cases, reference, tolerance, concept and timing tests, points.

    ``make_inputs(params, rng) -> {name: array}`` builds the inputs of one case (``rng`` is a
    ``numpy.random.Generator`` seeded from the secret seed); ``outputs(params) -> {name: (shape,
    dtype)}`` gives the output buffers, each dimension an int or, where it depends on the
    submission's constants, an expression like the contract's grid (``"ceil(n / BLOCK_SIZE)"``);
    ``inputs(params) -> {name: (shape, dtype)}`` (optional) declares what ``make_inputs`` makes
    without making it (the grader sizes the GPU's timing inputs from it: gigabytes otherwise);
    ``reference(inputs, params) -> {name: array}`` computes the expected outputs in float64 (or
    exactly, for integers), with the submission's constants (e.g. ``BLOCK_SIZE``) added to
    ``params``.
    ``source`` names the lesson or lecture the exercise comes from; ``number`` is its place in the
    course (the nbgrader assignment is ``f"{number:02d}_{name}"``); ``needs_gpu`` exercises are
    all ``skipped`` on the simulator.
    """

    name: str
    title: str
    source: str
    contract: Contract
    cases: list[Case]
    make_inputs: Callable[[dict, np.random.Generator], dict[str, np.ndarray]]
    outputs: Callable[[dict], dict[str, tuple[tuple[int, ...], str]]]
    reference: Callable[[dict[str, np.ndarray], dict], dict[str, np.ndarray]]
    tolerance: Tolerance = field(default_factory=Tolerance)
    inputs: Callable[[dict], dict[str, tuple[tuple[int, ...], str]]] | None = None
    concept: Concept | None = None
    timing: Timing | None = None
    diagnose: Diagnose | None = None
    number: int = 0
    needs_gpu: bool = False
    contract_text: str = ""

    def __post_init__(self):
        if self.timing is not None and self.inputs is None:
            raise ValueError(f"exercise {self.name}: a timing test needs `inputs` (the shapes "
                             "and dtypes of make_inputs' arrays, to size the GPU's timing inputs)")
        if self.timing is not None and self.timing.input_ranges:
            check_input_ranges(self.name, self.timing, self.inputs(self.timing.params))
        unknown = set(self.contract.zeroed) - set(self.contract.args)
        if unknown:
            raise ValueError(f"exercise {self.name}: Contract.zeroed names {sorted(unknown)}, "
                             "which are not kernel arguments")

    @property
    def assignment(self) -> str:
        """The nbgrader assignment (and folder) name, e.g. ``"01_tiled_matmul"``."""
        return f"{self.number:02d}_{self.name}"

    @property
    def part_points(self) -> dict[str, float]:
        """Maximum points of each part that carries points, in grading order:
        ``{"correctness": the cases' sum, "concept": ..., "timing": ...}`` (the test kinds of
        :class:`autograder.wire.results.Kind`; one nbgrader grade cell each)."""
        parts = {"correctness": float(sum(c.points for c in self.cases))}
        if self.concept and self.concept.points:
            parts["concept"] = float(self.concept.points)
        if self.timing and self.timing.points:
            parts["timing"] = float(self.timing.points)
        return parts

    @property
    def max_score(self) -> float:
        """The exercise's total points: the sum of :attr:`part_points`."""
        return sum(self.part_points.values())
