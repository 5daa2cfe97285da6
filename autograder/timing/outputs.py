"""Every timed launch's outputs checked: trusted kernels in the child (:class:`LaunchChecks`) that
give each launch fresh inputs and poisoned (or zeroed) outputs and afterwards reduce the student's
outputs to keyed digests compared with the instructor's, and the grader's judgement of the
numbers that comparison gives (:func:`wrong_launches`). The method as a whole is told in
:mod:`autograder.timing.measure`.

The instructor's outputs a launch is checked against are computed once per input copy, before the
measurement, by the instructor's kernel at the student's constants (:meth:`LaunchChecks.expect`):
the timed instructor kernel runs at the instructor's own constants (issue 30), where an output's
shape may differ (a block sum's one partial sum per block), and the same inputs give the same
outputs on every round.

**No expected output is in device memory while student code runs** (issue 30: a kernel copied
the stored answer into its output through out-of-bounds reads at a fixed offset, ratio 0.02, or
wrote zeros into the stored answer and its own output, 0/0 passing). Right after each copy's
expected outputs are computed they are reduced to a host-held digest and overwritten with the
poison (:meth:`LaunchChecks.expect`); :meth:`LaunchChecks.seal` drops and frees them before the
student's first launch. The timed instructor kernel's own outputs (the self-check's and the
choice's included) are set to their start values before every timed student launch
(:meth:`LaunchChecks.before`), and the digests of a student launch leave the device before its
next launch. A launch is checked by one digest kernel per output (:func:`_kernels`), with a key
of two 64-bit words drawn from ``os.urandom`` in :class:`LaunchChecks` (before any student
launch) and passed only as that kernel's arguments; the expected digests never go back to the
device.

The digest of a flat output ``x`` (n elements), all sums in float64:

- ``K`` = :data:`PROJECTIONS` (16) projections ``P_j = Σ_i w_ij x_i`` over its finite elements,
  each ``w_ij`` one byte of a keyed 64-bit hash of ``i`` (SplitMix64's finaliser), taken as an
  odd integer in [-255, 255] (mean 0, variance :data:`WEIGHT_VAR` = 21845); the products are
  exact in float64;
- the sum of squares of its finite elements, and the count of its NaN and infinite elements;
- ``lane``: Σ_i hash(key, i, bits of x_i) mod 2**64 (``-0.0`` counted as ``0.0``).

Per timed round ``r`` (one launch of each kernel on input copy ``r % copies``), each output gets
one row of :data:`FIELDS`, from the student's digest ``g`` and the expected digest ``e`` of copy
``r % copies``: ``sq_diff`` = Σ_j (P_j(g) - P_j(e))² / (K · 21845), an unbiased estimate of
Σ (g - e)² (the weights are independent of the outputs, which the student's kernel wrote before
the check could be known to it); ``sq_ref`` and ``sq_got``, the two sums of squares;
``nonfinite`` and ``ref_nonfinite``, the counts; ``differs``: 1 where the lanes differ (the
exact check: integers and exact outputs); ``ref_idle``: 1 where the expected output is what a
launch that does nothing leaves (its start value: the poison, or zero for an output that starts
at zero), which no timing can judge (a grader fault, never a pass of a 0/0). The child sends
these numbers in :class:`autograder.wire.protocol.TimingSamples`; the grader judges them.

**What the check detects.** Deterministically: any NaN or infinite element; a launch whose
Frobenius norm is off the expected one by more than the threshold (``| ||g|| - ||e|| | <=
||g - e||``: a zeroed, halved or partly zeroed output); for exact outputs any differing
element, except with probability about 2**-64 (a keyed hash the kernel never saw the key of).
Statistically, for a float output with relative error ``ρ = ||g - e|| / ||e||`` against the
threshold ``τ`` = :data:`TOLERANCE_FACTOR` × ``rel_frobenius``: where ``g - e`` is spread over
more than a few dozen elements, ``sq_diff / ||g - e||²`` follows χ²₁₆/16 (each projection a
sum of many independent terms), so a launch passes with probability P(χ²₁₆ ≤ 16 (τ/ρ)²):
about 3e-2 at ρ = 1.5τ, 1e-3 at 2τ, 4e-6 at 3τ, 6e-8 at 4τ; a 16x16 tile left at zero in a
2048x2048 matmul (ρ ≈ 39τ) about 1e-23. An honest kernel at ρ = τ/2 fails with probability 1e-7
(at ρ = τ, the edge of the tolerance, 0.45: the tolerance is respected approximately, not to
the digit). A few wrong elements (where the χ² law does not hold) are found more surely: one
element off by ``d`` gives ``sq_diff`` = ``d²`` × mean_j w_ij²/21845 ≥ d²/21845, and for any
nonzero error at most one of the 256 values of one weight cancels a projection, so all 16 vanish
with probability at most 256**-16.

**Why one key per grading, not one per check.** A fresh key per check would need the expected
outputs at each check, in device memory (where a kernel reads them) or on the host (16 hashed
projections of up to 4·10⁸ elements per round, seconds of CPU). A fixed key is enough because a
kernel that knew it still could not pass: to match ``P_j(e)`` and ``||e||`` it needs the
expected outputs' digests, which exist on the host only (they are never on the device after
:meth:`LaunchChecks.expect`), or its own earlier digests, which leave the device after each
check (:meth:`LaunchChecks.after_round`); computing them without the answer costs as much as the
answer (a matmul's projection ``Σ W∘(AB)`` is a matmul). The key is on the device only as the
digest kernel's launch arguments (driver memory, in no allocation of the context).

Importing this module imports no Numba: the grader uses :func:`wrong_launches` only.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

FIELDS = ("sq_diff", "sq_ref", "nonfinite", "ref_nonfinite", "differs", "sq_got", "ref_idle")
#: A float launch passes at a relative Frobenius error against the instructor's output of at most
#: this many times the exercise's tolerance: both kernels may be off the float64 reference by the
#: tolerance, in opposite directions (the triangle inequality), and no more.
TOLERANCE_FACTOR = 2.0
THREADS = 256
#: At most this many blocks for a reduction (each thread then loops): enough threads to keep the
#: memory of an H100 or H200 busy, and few atomic adds per row.
MAX_BLOCKS = 2048
#: Keyed projections per digest (two 64-bit hashes per element, one byte a weight).
PROJECTIONS = 16
#: The variance of a weight: the odd integers of [-255, 255], uniform: (256² - 1) / 3.
WEIGHT_VAR = (256 * 256 - 1) / 3
#: A digest's float64 fields: the projections, the sum of squares, the non-finite count.
_SUMSQ, _NONFINITE = PROJECTIONS, PROJECTIONS + 1
_NF = PROJECTIONS + 2


# --- in the grader --------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaunchVerdict:
    """What :func:`wrong_launches` found: ``message`` for the student (None: every launch
    right) and ``grader_fault`` (the checks were missing or malformed, or the instructor's own
    output was not finite or cannot tell a launch that does nothing: not the student's fault,
    reported as an error)."""

    message: str | None
    grader_fault: bool = False


def _is_exact(dtype: str, exact: bool) -> bool:
    return exact or np.dtype(dtype).kind in "iub"


def _row_problem(name: str, row, exact: bool, rel_tol: float) -> str | None:
    """Why one output of one launch is wrong, or None: ``row`` as :data:`FIELDS`."""
    sq_diff, sq_ref, nonfinite, _, differs, sq_got, _ = (float(x) for x in row)
    if nonfinite > 0:
        return f"{name}: {int(nonfinite)} elements NaN or infinite"
    if exact:
        if differs > 0:
            return f"{name}: differs from the instructor's (exact) result"
        return None
    if sq_ref <= 0:  # the instructor's output is all zero: so must the student's be
        return None if sq_got == 0 and sq_diff == 0 else f"{name}: not zero where it must be"
    norm = math.sqrt(sq_ref)
    rel = max(math.sqrt(sq_diff) / norm, abs(math.sqrt(sq_got) - norm) / norm)
    if rel > TOLERANCE_FACTOR * rel_tol:
        return f"{name}: relative error {rel:.2g}"
    return None


def wrong_launches(checks, outputs: dict, rel_frobenius: float, exact: bool,
                   rounds: int) -> LaunchVerdict:
    """Judge the raw numbers of every timed launch. ``checks``: one entry per timed round, each
    one row of :data:`FIELDS` per output in the order of ``outputs`` (name → (shape, dtype), as
    :attr:`Exercise.outputs` gives them at the timing's parameters); ``rounds``: the
    timed rounds the samples hold. Floats pass with no NaN or infinity and at a relative
    Frobenius error against the instructor's output (estimated from the keyed digests, and the
    difference of the norms) of at most :data:`TOLERANCE_FACTOR` × ``rel_frobenius``; integers
    and ``exact`` outputs when their keyed hashes agree. A malformed ``checks`` (wrong lengths,
    a negative count), an instructor's output with non-finite values or equal to what a launch
    that does nothing leaves (``ref_idle``) is a grader fault."""
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
            if row[6] > 0:
                return LaunchVerdict(
                    f"the instructor's {name} at the timing size is what a launch that does "
                    "nothing leaves, so the timing cannot tell work from none; ask your "
                    "instructor", True)
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


def compare(got, want, idle) -> list:
    """One row of :data:`FIELDS` from three digests (as :meth:`LaunchChecks.digest` returns
    them: ``(float64 fields, lane)``): the student's launch ``got``, the expected output
    ``want`` and the output at its start value ``idle``. Plain floats."""
    g, g_lane = got
    e, e_lane = want
    d = np.asarray(g[:PROJECTIONS], np.float64) - np.asarray(e[:PROJECTIONS], np.float64)
    sq_diff = float(np.dot(d, d)) / (PROJECTIONS * WEIGHT_VAR)
    ref_idle = e_lane == idle[1] and float(e[_NONFINITE]) == float(idle[0][_NONFINITE])
    return [sq_diff, float(e[_SUMSQ]), float(g[_NONFINITE]), float(e[_NONFINITE]),
            float(g_lane != e_lane), float(g[_SUMSQ]), float(ref_idle)]


# --- in the child (GPU) ---------------------------------------------------------------------------

def _own(name: str) -> str:
    from autograder.host.kernel_cache import module_identity

    return module_identity(__file__, name)


_KERNELS: dict = {}


def _kernels() -> dict:
    """The trusted kernels, defined once per process: ``poison`` (every element of a flat array
    set to a value) and ``digest_float``, ``digest_int`` (one flat output and its unsigned
    view ``bits`` reduced, with the key ``(ka, kb)``, into row ``row`` of a float64 table of
    :data:`PROJECTIONS` + 2 columns and a uint64 table of lanes: the module's docstring)."""
    if _KERNELS:
        return _KERNELS
    global cuda  # a module global, which the simulator swaps for its own in a kernel's globals
    from numba import cuda, float64, uint64

    n_fields, half = _NF, PROJECTIONS // 2

    @cuda.jit
    def poison(a, value):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = value

    @cuda.jit(device=True)
    def mix(z):  # SplitMix64's finaliser
        z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
        return z ^ (z >> uint64(31))

    @cuda.jit(device=True)
    def weigh(acc, h1, h2, v):
        for j in range(half):
            shift = uint64(8 * j)
            acc[j] += (float64((h1 >> shift) & uint64(255)) * 2.0 - 255.0) * v
            acc[half + j] += (float64((h2 >> shift) & uint64(255)) * 2.0 - 255.0) * v
        acc[n_fields - 2] += v * v

    @cuda.jit(device=True)
    def reduce_into(ftab, utab, row, acc, lane, sums, lanes):
        tid = cuda.threadIdx.x
        for f in range(n_fields):
            sums[f, tid] = acc[f]
        lanes[tid] = lane
        cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if tid < step:
                for f in range(n_fields):
                    sums[f, tid] += sums[f, tid + step]
                lanes[tid] += lanes[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            for f in range(n_fields):
                cuda.atomic.add(ftab, (row, f), sums[f, 0])
            cuda.atomic.add(utab, row, lanes[0])

    @cuda.jit
    def digest_float(x, bits, ka, kb, ftab, utab, row):
        sums = cuda.shared.array((n_fields, THREADS), float64)
        lanes = cuda.shared.array(THREADS, uint64)
        acc = cuda.local.array(n_fields, float64)
        for f in range(n_fields):
            acc[f] = 0.0
        lane = uint64(0)
        i = cuda.grid(1)
        while i < x.size:
            v = x[i]
            b = uint64(bits[i])
            if v == 0:  # -0.0 is 0.0
                b = uint64(0)
            h1 = mix(uint64(i) ^ ka)
            h2 = mix(h1 ^ kb)
            lane += mix(h2 ^ b)
            if math.isfinite(v):
                weigh(acc, h1, h2, float64(v))
            else:
                acc[n_fields - 1] += 1.0
            i += cuda.gridsize(1)
        reduce_into(ftab, utab, row, acc, lane, sums, lanes)

    @cuda.jit
    def digest_int(x, bits, ka, kb, ftab, utab, row):
        sums = cuda.shared.array((n_fields, THREADS), float64)
        lanes = cuda.shared.array(THREADS, uint64)
        acc = cuda.local.array(n_fields, float64)
        for f in range(n_fields):
            acc[f] = 0.0
        lane = uint64(0)
        i = cuda.grid(1)
        while i < x.size:
            h1 = mix(uint64(i) ^ ka)
            h2 = mix(h1 ^ kb)
            lane += mix(h2 ^ uint64(bits[i]))
            weigh(acc, h1, h2, float64(x[i]))
            i += cuda.gridsize(1)
        reduce_into(ftab, utab, row, acc, lane, sums, lanes)

    _KERNELS.update(poison=poison, digest_float=digest_float, digest_int=digest_int)
    return _KERNELS


def _blocks(n: int, cap: int | None = None) -> int:
    blocks = max(1, (n + THREADS - 1) // THREADS)
    return min(blocks, cap) if cap else blocks


def _bits(flat):
    """The unsigned integer view of a flat device array (the same memory)."""
    return flat.view(np.dtype(f"u{flat.dtype.itemsize}"))


class LaunchChecks:
    """In the child: the hooks :func:`autograder.timing.measure.time_pair` calls around the timed
    launches, and the rows of :data:`FIELDS` they leave.

    ``student``: the student's output arrays; ``expected``: per input copy, arrays for the
    instructor's outputs for that copy's inputs, in the same order, shapes and dtypes as
    ``student`` (the instructor's kernel run at the student's constants, untimed, by
    :meth:`expect`, which keeps only their digests: an output's shape may follow the constants,
    e.g. one partial sum per block of ``BLOCK_SIZE``, while the timed instructor kernel runs at
    its own); ``refills``: per input copy, the functions that write that copy's inputs again
    (:func:`autograder.timing.measure.device_random_later`); ``max_rounds``: rows kept;
    ``zeroed``: per output (same order), True where it starts at zero (the contract's
    ``zeroed``: an accumulator): it is zeroed before each launch of either kernel instead of
    poisoned before the student's; ``reference_zeroed``: the timed instructor kernels' outputs
    that start at zero; ``reference_outputs``: ``(array, starts at zero)`` for every output of
    every timed instructor kernel, set to its start value before every timed student launch.
    The key is drawn and everything is allocated and compiled now (``compile_for``:
    :func:`autograder.timing.measure.compiled_for`); no kernel runs until a method is
    called. Raises ``ValueError`` without expected outputs for every output."""

    def __init__(self, cuda, student: list, expected: list[list], refills: list[list],
                 max_rounds: int, compile_for=None, zeroed: list[bool] | None = None,
                 reference_zeroed: list | None = None, reference_outputs: list | None = None):
        from autograder.wire.buffers import start_value

        k = _kernels()
        zeroed = list(zeroed or [False] * len(student))
        self.cuda = cuda
        self.student = [a.reshape(a.size) for a in student]
        self.expected = [[a.reshape(a.size) for a in outputs] for outputs in expected]
        if not self.expected or any(len(outputs) != len(student) for outputs in expected):
            raise ValueError("LaunchChecks needs the instructor's outputs of every output, for "
                             "at least one input copy")
        self.refills = refills
        self.max_rounds = max_rounds
        words = np.frombuffer(os.urandom(16), np.uint64)  # the key: before any student launch
        self.key = (np.uint64(words[0]), np.uint64(words[1]))
        n = max(1, len(student))
        self.ftab = cuda.device_array((n, _NF), np.float64)
        self.utab = cuda.device_array(n, np.uint64)
        self.starts, self.digests = [], []
        for got, zero in zip(self.student, zeroed):
            self.starts.append(start_value(got.dtype, zero)[0])
            name = "digest_float" if got.dtype.kind == "f" else "digest_int"
            self.digests.append(k[name])
            if compile_for is not None:
                compile_for(k["poison"], (got, self.starts[-1]), _own("poison"))
                compile_for(k[name], (got, _bits(got), *self.key, self.ftab, self.utab, 0),
                            _own(name))
        self.zeroes = []
        for arr in reference_zeroed or ():
            flat = arr.reshape(arr.size)
            self.zeroes.append((flat, start_value(flat.dtype, True)[0]))
            if compile_for is not None:
                compile_for(k["poison"], self.zeroes[-1], _own("poison"))
        self.reference_starts = []
        for arr, zero in reference_outputs or ():
            flat = arr.reshape(arr.size)
            self.reference_starts.append((flat, start_value(flat.dtype, zero)[0]))
            if compile_for is not None:
                compile_for(k["poison"], self.reference_starts[-1], _own("poison"))
        self.poison = k["poison"]
        self.want: dict[int, list] = {}  # input copy -> the expected outputs' digests
        self.idle: list | None = None
        self.rows: list = []

    def _start(self, arrays: list) -> None:
        """Each of ``arrays`` (in the order of the outputs) set to its output's start value:
        the poison, or zero for an output that starts at zero."""
        for arr, value in zip(arrays, self.starts):
            self.poison[_blocks(arr.size), THREADS](arr, value)

    def digest(self, arrays: list) -> list:
        """The digests of ``arrays`` (flat, in the order of the outputs), on the host:
        ``[(float64 fields, lane), ...]``; the device's tables are zeroed before and after
        (no digest stays on the device). GPU work, then a wait for it."""
        n = max(1, len(self.student))
        self.ftab.copy_to_device(np.zeros((n, _NF), np.float64))
        self.utab.copy_to_device(np.zeros(n, np.uint64))
        for o, (arr, digest) in enumerate(zip(arrays, self.digests)):
            digest[_blocks(arr.size, MAX_BLOCKS), THREADS](arr, _bits(arr), *self.key,
                                                         self.ftab, self.utab, o)
        fields, lanes = self.ftab.copy_to_host(), self.utab.copy_to_host()
        self.ftab.copy_to_device(np.zeros((n, _NF), np.float64))
        self.utab.copy_to_device(np.zeros(n, np.uint64))
        return [(fields[o].copy(), int(lanes[o])) for o in range(len(arrays))]

    def expect(self, copy: int, launch) -> None:
        """The instructor's outputs for input copy ``copy``: its inputs written again, its
        expected outputs set to their start values, ``launch()`` (which runs the instructor's
        kernel on that copy's inputs into ``expected[copy]``), then their digests kept on the
        host and the outputs poisoned again. GPU work: once per copy, before the
        measurement."""
        for refill in self.refills[copy % len(self.refills)]:
            refill()
        arrays = self.expected[copy % len(self.expected)]
        self._start(arrays)
        launch()
        self.want[copy % len(self.expected)] = self.digest(arrays)
        for arr in arrays:  # the poison, whatever the output's start value
            self.poison[_blocks(arr.size), THREADS](arr, _poison_of(arr.dtype))

    def seal(self) -> None:
        """Before the student's first launch: the digest of a launch that does nothing (the
        student's outputs at their start values) kept, and the expected outputs, already
        poisoned by :meth:`expect`, dropped and freed. Raises ``RuntimeError`` where a copy's
        digests were not taken."""
        if len(self.want) != len(self.expected):
            raise RuntimeError("the expected outputs of every input copy must be computed "
                               "before the checks are sealed")
        self._start(self.student)
        self.idle = self.digest(self.student)
        self.expected = []
        self.cuda.synchronize()
        try:  # free now: Numba defers the frees of arrays no longer referenced
            self.cuda.current_context().deallocations.clear()
        except Exception:  # noqa: BLE001 - the simulator has no pending frees
            pass

    def reset(self) -> None:
        """Forget the rows, before each measurement."""
        self.rows = []

    def before(self, side: int, r: int) -> None:
        """Before a sample's L2 flush: the inputs of copy ``r`` written again (both kernels
        start from the grader's values, whatever an earlier launch did to them), and, before
        the student's launch (``side`` 0), its outputs poisoned (zeroed where they start at
        zero) and every timed instructor kernel's outputs set to their start values (no answer
        of the instructor's in device memory while the student's kernel runs); before the
        instructor's (``side`` 1), its outputs that start at zero zeroed."""
        for refill in self.refills[r % len(self.refills)]:
            refill()
        if side == 0:
            self._start(self.student)
            for arr, value in self.reference_starts:
                self.poison[_blocks(arr.size), THREADS](arr, value)
        else:
            for arr, zero in self.zeroes:
                self.poison[_blocks(arr.size), THREADS](arr, zero)

    def after_round(self, r: int) -> None:
        """After round ``r``'s two end events: each student output's digest against the
        expected output's for the same input copy (``r % copies``), one row per output
        kept for ``r``. GPU work, then a wait for it."""
        if r >= self.max_rounds:
            return
        if self.idle is None:
            raise RuntimeError("the checks were not sealed before the timed launches")
        got = self.digest(self.student)
        want = self.want[r % len(self.want)]
        while len(self.rows) <= r:
            self.rows.append(None)
        self.rows[r] = [compare(g, w, i) for g, w, i in zip(got, want, self.idle)]

    def results(self, rounds: int) -> list:
        """The rows of the first ``rounds`` rounds: ``[[row of FIELDS per output] per round]``
        (plain floats, for the record); a round not checked has no rows (the grader's
        fault)."""
        return [row if row is not None else []
                for row in self.rows[:min(rounds, self.max_rounds)]]


def _poison_of(dtype):
    from autograder.wire.buffers import start_value

    return start_value(dtype, False)[0]
