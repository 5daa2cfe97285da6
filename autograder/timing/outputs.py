"""Every timed launch's outputs checked: trusted kernels in the child (:class:`LaunchChecks`) that
give each launch fresh inputs and poisoned (or zeroed) outputs and afterwards reduce the student's outputs
against the instructor's to raw numbers, and the grader's judgement of those numbers
(:func:`wrong_launches`). The method as a whole is told in :mod:`autograder.timing.measure`.

The instructor's outputs a launch is checked against are computed once per input copy, before the
measurement, by the instructor's kernel at the student's constants (:meth:`LaunchChecks.expect`):
the timed instructor kernel runs at the instructor's own constants (issue 30), where an output's
shape may differ (a block sum's one partial sum per block), and the same inputs give the same
outputs on every round.

Per timed round ``r`` (one launch of each kernel on input copy ``r % copies``), each output gets
one row of :data:`FIELDS`: ``sq_diff`` (sum of squared differences student - instructor over the
elements finite in both), ``sq_ref`` (sum of the instructor's finite values squared),
``nonfinite`` (the student's NaN or infinite elements; the poison is NaN), ``ref_nonfinite``
(the instructor's) and ``mismatched`` (elements not equal: integers, exact tolerances; NaN
counts). Sums in float64; counts as float64 (exact below 2**53). The child never judges: these
numbers go to the grader in :class:`autograder.wire.protocol.TimingSamples`.

Importing this module imports no Numba: the grader uses :func:`wrong_launches` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

FIELDS = ("sq_diff", "sq_ref", "nonfinite", "ref_nonfinite", "mismatched")
#: A float launch passes at a relative Frobenius error against the instructor's output of at most
#: this many times the exercise's tolerance: both kernels may be off the float64 reference by the
#: tolerance, in opposite directions (the triangle inequality), and no more.
TOLERANCE_FACTOR = 2.0
THREADS = 256
#: At most this many blocks for a reduction (each thread then loops): enough threads to keep the
#: memory of an H100 or H200 busy, and few atomic adds per row.
MAX_BLOCKS = 2048


# --- in the grader --------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaunchVerdict:
    """What :func:`wrong_launches` found: ``message`` for the student (None: every launch
    right) and ``grader_fault`` (the checks were missing or malformed, or the instructor's own
    output was not finite: not the student's fault, reported as an error)."""

    message: str | None
    grader_fault: bool = False


def _is_exact(dtype: str, exact: bool) -> bool:
    return exact or np.dtype(dtype).kind in "iub"


def _row_problem(name: str, row, exact: bool, rel_tol: float) -> str | None:
    """Why one output of one launch is wrong, or None: ``row`` as :data:`FIELDS`."""
    sq_diff, sq_ref, nonfinite, _, mismatched = (float(x) for x in row)
    if exact:
        if mismatched > 0:
            return f"{name}: {int(mismatched)} elements differ from the instructor's"
        return None
    if nonfinite > 0:
        return f"{name}: {int(nonfinite)} elements NaN or infinite"
    rel = math.sqrt(sq_diff / sq_ref) if sq_ref > 0 else (0.0 if sq_diff == 0 else math.inf)
    if rel > TOLERANCE_FACTOR * rel_tol:
        return f"{name}: relative error {rel:.2g}"
    return None


def wrong_launches(checks, outputs: dict, rel_frobenius: float, exact: bool,
                   rounds: int) -> LaunchVerdict:
    """Judge the raw numbers of every timed launch. ``checks``: one entry per timed round, each
    one row of :data:`FIELDS` per output in the order of ``outputs`` (name → (shape, dtype), as
    :attr:`Exercise.outputs` gives them at the timing's parameters); ``rounds``: the
    timed rounds the samples hold. Floats pass at a relative Frobenius error against the
    instructor's output of at most :data:`TOLERANCE_FACTOR` × ``rel_frobenius`` and no NaN;
    integers and ``exact`` outputs when every element is equal. A malformed ``checks`` (wrong
    lengths, a negative count) is a grader fault."""
    names = list(outputs)
    if not isinstance(checks, (list, tuple)) or len(checks) != rounds or any(
            len(entry) != len(names) or any(len(row) != len(FIELDS) for row in entry)
            for entry in checks):
        return LaunchVerdict("the timing sent no usable checks of its launches' outputs "
                             f"({rounds} rounds, {len(names)} outputs expected)", True)
    wrong = []
    for k, entry in enumerate(checks):
        for name, row in zip(names, entry):
            if any(not math.isfinite(float(x)) or float(x) < 0 for x in row):
                return LaunchVerdict(f"the check of timed launch {k + 1} sent invalid numbers",
                                     True)
            if row[3] > 0:
                return LaunchVerdict(
                    f"the instructor's kernel gave {int(row[3])} non-finite values in {name} at "
                    f"timed launch {k + 1}, so the timing cannot be judged; ask your instructor",
                    True)
        problems = []
        for name, row in zip(names, entry):
            why = _row_problem(name, row, _is_exact(outputs[name][1], exact), rel_frobenius)
            if why:
                problems.append(why)
        if problems:
            wrong.append((k, problems))
    if not wrong:
        return LaunchVerdict(None)
    k, problems = wrong[0]
    which = (f"timed launch {k + 1} of {rounds}" if len(wrong) == 1 else
             f"{len(wrong)} of {rounds} timed launches (the first: launch {k + 1})")
    return LaunchVerdict(
        f"{which} gave wrong results ({'; '.join(problems)}): timing counts only kernels that "
        "compute the whole result on every launch, from the inputs they are given")


# --- in the child (GPU) ---------------------------------------------------------------------------

def _own(name: str) -> str:
    from autograder.host.kernel_cache import module_identity

    return module_identity(__file__, name)


_KERNELS: dict = {}


def _kernels() -> dict:
    """The trusted kernels, defined once per process: ``poison`` (every element of a flat array
    set to a value), ``compare_float`` and ``compare_int`` (one output against the instructor's,
    added into one row of a float64 table of :data:`FIELDS`)."""
    if _KERNELS:
        return _KERNELS
    global cuda  # a module global, which the simulator swaps for its own in a kernel's globals
    from numba import cuda, float64

    n_fields = len(FIELDS)

    @cuda.jit
    def poison(a, value):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = value

    def reduce_into(table, row, acc, sums):
        tid = cuda.threadIdx.x
        for f in range(n_fields):
            sums[f, tid] = acc[f]
        cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                for f in range(n_fields):
                    sums[f, tid] += sums[f, tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            for f in range(n_fields):
                cuda.atomic.add(table, (row, f), sums[f, 0])

    reduce_dev = cuda.jit(device=True)(reduce_into)

    @cuda.jit
    def compare_float(got, ref, table, row):
        sums = cuda.shared.array((n_fields, THREADS), float64)
        acc = cuda.local.array(n_fields, float64)
        for f in range(n_fields):
            acc[f] = 0.0
        i = cuda.grid(1)
        while i < got.size:
            g = got[i]
            r = ref[i]
            if g != r:
                acc[4] += 1.0
            g_ok = math.isfinite(g)
            r_ok = math.isfinite(r)
            if not g_ok:
                acc[2] += 1.0
            if r_ok:
                acc[1] += float64(r) * float64(r)
            else:
                acc[3] += 1.0
            if g_ok and r_ok:
                d = float64(g) - float64(r)
                acc[0] += d * d
            i += cuda.gridsize(1)
        reduce_dev(table, row, acc, sums)

    @cuda.jit
    def compare_int(got, ref, table, row):
        sums = cuda.shared.array((n_fields, THREADS), float64)
        acc = cuda.local.array(n_fields, float64)
        for f in range(n_fields):
            acc[f] = 0.0
        i = cuda.grid(1)
        while i < got.size:
            if got[i] != ref[i]:
                acc[4] += 1.0
            i += cuda.gridsize(1)
        reduce_dev(table, row, acc, sums)

    _KERNELS.update(poison=poison, compare_float=compare_float, compare_int=compare_int)
    return _KERNELS


def _blocks(n: int, cap: int | None = None) -> int:
    blocks = max(1, (n + THREADS - 1) // THREADS)
    return min(blocks, cap) if cap else blocks


class LaunchChecks:
    """In the child: the hooks :func:`autograder.timing.measure.time_pair` calls around the timed
    launches, and the raw numbers they leave.

    ``student``: the student's output arrays; ``expected``: per input copy, the instructor's
    outputs for that copy's inputs, in the same order, shapes and dtypes as ``student`` (the
    instructor's kernel run at the student's constants, untimed, by :meth:`expect`: an output's
    shape may follow the constants, e.g. one partial sum per block of ``BLOCK_SIZE``, while the
    timed instructor kernel runs at its own); ``refills``: per input copy, the functions that
    write that copy's inputs again (:func:`autograder.timing.measure.device_random_later`);
    ``max_rounds``: rows kept; ``zeroed``: per output (same order), True where it starts at
    zero (the contract's ``zeroed``: an accumulator): it is zeroed before each launch of
    either kernel instead of poisoned before the student's; ``reference_zeroed``: the timed
    instructor kernels' outputs that start at zero. Everything is allocated and compiled now
    (``compile_for``: :func:`autograder.timing.measure.compiled_for`); no kernel runs until a
    hook is called."""

    def __init__(self, cuda, student: list, expected: list[list], refills: list[list],
                 max_rounds: int, compile_for=None, zeroed: list[bool] | None = None,
                 reference_zeroed: list | None = None):
        from autograder.wire.buffers import start_value

        k = _kernels()
        zeroed = list(zeroed or [False] * len(student))
        self.student = [a.reshape(a.size) for a in student]
        self.expected = [[a.reshape(a.size) for a in outputs] for outputs in expected]
        if not self.expected or any(len(outputs) != len(student) for outputs in expected):
            raise ValueError("LaunchChecks needs the instructor's outputs of every output, for "
                             "at least one input copy")
        self.refills = refills
        self.max_rounds = max_rounds
        self.table = cuda.device_array((max_rounds * max(1, len(student)), len(FIELDS)),
                                       np.float64)
        self.starts, self.compares, self.zeroes = [], [], []
        for got, zero in zip(self.student, zeroed):
            is_float = got.dtype.kind == "f"
            self.starts.append(start_value(got.dtype, zero)[0])
            self.compares.append(k["compare_float"] if is_float else k["compare_int"])
            if compile_for is not None:
                compile_for(k["poison"], (got, self.starts[-1]), _own("poison"))
                name = "compare_float" if is_float else "compare_int"
                compile_for(self.compares[-1], (got, got, self.table, 0), _own(name))
        for arr in reference_zeroed or ():
            flat = arr.reshape(arr.size)
            self.zeroes.append((flat, start_value(flat.dtype, True)[0]))
            if compile_for is not None:
                compile_for(k["poison"], self.zeroes[-1], _own("poison"))
        self.poison = k["poison"]
        self.rounds = 0

    def _start(self, arrays: list) -> None:
        """Each of ``arrays`` (in the order of the outputs) set to its output's start value:
        the poison, or zero for an output that starts at zero."""
        for arr, value in zip(arrays, self.starts):
            self.poison[_blocks(arr.size), THREADS](arr, value)

    def expect(self, copy: int, launch) -> None:
        """The instructor's outputs for input copy ``copy``: its inputs written again, its
        expected outputs set to their start values, then ``launch()`` (which runs the
        instructor's kernel on that copy's inputs into ``expected[copy]``). GPU work: once
        per copy, before the measurement."""
        for refill in self.refills[copy % len(self.refills)]:
            refill()
        self._start(self.expected[copy % len(self.expected)])
        launch()

    def reset(self) -> None:
        """Zero the table, before each measurement (GPU work: once the GPU is the child's)."""
        self.table.copy_to_device(np.zeros(self.table.shape, np.float64))
        self.rounds = 0

    def before(self, side: int, r: int) -> None:
        """Before a sample's L2 flush: the inputs of copy ``r`` written again (both kernels
        start from the grader's values, whatever an earlier launch did to them), and, before
        the student's launch (``side`` 0), its outputs poisoned (zeroed where they start at
        zero); before the instructor's (``side`` 1), its outputs that start at zero zeroed."""
        for refill in self.refills[r % len(self.refills)]:
            refill()
        if side == 0:
            self._start(self.student)
        else:
            for arr, zero in self.zeroes:
                self.poison[_blocks(arr.size), THREADS](arr, zero)

    def after_round(self, r: int) -> None:
        """After round ``r``'s two end events: each student output against the instructor's
        output for the same input copy (``expected[r % copies]``), into the table's rows for
        ``r``."""
        if r >= self.max_rounds:
            return
        n = len(self.student)
        expected = self.expected[r % len(self.expected)]
        for o, (got, ref, compare) in enumerate(zip(self.student, expected, self.compares)):
            compare[_blocks(got.size, MAX_BLOCKS), THREADS](got, ref, self.table, r * n + o)
        self.rounds = max(self.rounds, r + 1)

    def results(self, rounds: int) -> list:
        """The table's rows for the first ``rounds`` rounds: ``[[row of FIELDS per output] per
        round]`` (plain floats, for the record)."""
        n = max(1, len(self.student))
        table = self.table.copy_to_host()
        return [[[float(x) for x in table[r * n + o]] for o in range(len(self.student))]
                for r in range(min(rounds, self.max_rounds))]
