"""Timing: the student's kernel against the instructor's, interleaved in one process.

The method, in one place (issue "Timing verdicts you can trust"): CUDA events around each launch;
warm-up launches first; the L2 cache flushed before every sample (a write over a buffer twice
the L2 size); inputs rotated over several copies so no sample starts from data another left in
cache; student and instructor launches alternate, the order flipping each round; sampling stops
once the ratio's relative standard error is under ``target_rse`` (after ``min_rounds``), once
the ratio's 95 % interval lies wholly at or below the full-points ratio or at or above the
no-points ratio (more rounds could not change the points), or when the time budget runs out.
The verdict is on the geometric mean of the per-round ratios (student / instructor), with its
95 % confidence interval in the message.

Every timed launch of the student's kernel is checked (issue 20: a kernel that skipped its work
at the timing size got full points), by trusted kernels of :mod:`autograder.timing.outputs`, all
outside the CUDA-event timed region (enqueued before the sample's L2 flush or after its end
event), so the samples are what they were without them: the student's and the instructor's
kernels write separate output buffers; before every launch of either, the inputs of its copy
are written again by the grader's fill kernel (no launch can leave the next one a prepared input
or an answer hidden in an input), and before every student launch its outputs are poisoned
(NaN for floats, the sentinel for integers), so a launch that skips work, or some of it, leaves
NaN; after each round a reduction kernel reduces the student's outputs to keyed digests (random
projections, the sum of squares, the non-finite count, a keyed hash of every element), compared
in the child with the digests of the instructor's outputs for the same input copy into raw
numbers per launch, which the child sends in :class:`autograder.wire.protocol.TimingSamples`.
The grader judges them (:func:`autograder.timing.outputs.wrong_launches`): one wrong timed
launch and the timing test gets no points and says which launch was wrong and how. No answer of
the instructor's is in device memory while a student's launch runs, for out-of-bounds reads to
copy or writes to change (issue 30): the expected outputs are reduced to host-held digests and
poisoned before the student's first launch, the timed instructor kernel's outputs are reset
before each student launch, and no digest stays on the device. Not seen: a kernel that writes
through out-of-bounds indexes into other memory it was not given (memcheck looks for that on the
sanitizer's case).

The instructor's kernel runs at the instructor's configuration (issue 30): its module as written,
its own constants and the launch the contract gives for them, on the same inputs as the
student's, never at the student's constants (a naive matmul with ``TILE_WIDTH = 2`` beat the
instructor's kernel compiled at 2). Where an exercise has several instructor references (the
solution and its kernel with run-time loop bounds), they are timed against each other first and
the fastest on this GPU is the one compared with (:func:`autograder.child.timing.choose_reference`);
which one the student's code looks like does not choose it. The timing message says where the
student's constants differ from the instructor's (:func:`configuration_text`).

Before the student's kernel counts, the instructor's is timed against itself: if that ratio is
off by more than ``SELF_CHECK_TOLERANCE`` (a throttled or shared GPU), timing tests are reported
as ``error`` with that reason instead of failing the student.

:func:`time_pair` runs inside the child (it needs both kernels on one GPU); :func:`ratio_stats`
and :func:`verdict` run in the grader on the raw samples. Times are in milliseconds.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

from autograder.source import loops

SELF_CHECK_TOLERANCE = 0.05


def loop_bounds_at_run_time(text: str, kernel: str, constants=()) -> bool:
    """True when the function ``kernel`` in the source ``text`` bounds its loops the way
    ``solution_blockdim.py`` does: some loop is bounded by the block's size read at run time
    and none by the compile-time ``constants`` (the contract's constant names, e.g.
    ``BLOCK_SIZE``) alone (:func:`autograder.source.loops.loops` says which loop is which).

    Such a loop cannot be unrolled, which costs a textbook kernel 1.3-1.4x against the
    instructor's compile-time bounds (H100, 2026-11-24; the ``runtime_loop_bound`` hint says
    so). It no longer chooses the timing reference: every student is timed against the fastest
    instructor reference (issue 30). False for text that does not parse or has no such
    function."""
    found = loops.loops(text, kernel, constants)
    return any(loop.block_size for loop in found) and not any(loop.constants for loop in found)


def compiled_for(kernel, args, identity: str | None = None) -> bool:
    """Compile ``kernel`` (a Numba CUDA dispatcher) for ``args`` now, without launching it, so
    that its first launch finds it compiled (the JIT, CPU work, stays outside the exclusive
    hold of a measurement: :mod:`autograder.host.gpulock`). With ``identity`` (a kernel the grader trusts), from the
    host's cache of compiled kernels when it has it (:mod:`autograder.host.kernel_cache`). A kernel
    that cannot be compiled that way (one given fixed signatures) is left as it is: its launch
    compiles or fails as before. True when it came from the cache."""
    from autograder.host.kernel_cache import compile_for

    try:
        return compile_for(kernel, args, identity) == "loaded"
    except Exception:  # noqa: BLE001 - the launch reports a real problem
        return False


def _own(name: str) -> str:
    """The cache identity of this module's kernel ``name``."""
    from autograder.host.kernel_cache import module_identity

    return module_identity(__file__, name)


#: Nanoseconds the L2 flush kernel lasts at least, before a sample's start event: the host
#: enqueues the start event, the launch and the end event meanwhile, so no sample includes
#: the host's launch overhead or a moment the host's thread was descheduled (a loaded host).
BUSY_NS = 300_000
#: A sample whose start event, launch and end event took the host longer than this to enqueue
#: may include a gap: it is taken again (at most :data:`RETRIES` times).
HOST_WINDOW_S = 250e-6
RETRIES = 5
#: A sample more than this fraction slower than its kernel's median so far (over at least
#: :data:`DISTURBED_AFTER` samples) was disturbed: taken again (issue 22: on an idle H100, with
#: nothing else on the GPU, about one round in 200 had one sample 15-50 % slow; beside a CUDA
#: context starting or ending, or NVML queries, more. One such round among the 10 of a settled
#: measurement moved its ratio by 3-5 %). Other work only ever adds time, so only slow samples
#: are retaken. Disturbances are rare, so each kernel may have one retaken sample plus
#: :data:`DISTURBED_MAX_SHARE` of its samples: a kernel whose own launches vary more than
#: :data:`DISTURBED` keeps its slow samples beyond that (its ratio then leans at most that share
#: of its samples towards its faster launches).
DISTURBED = 0.10
DISTURBED_AFTER = 3
DISTURBED_MAX_SHARE = 0.10
#: Seconds before the first retake of a sample, doubled for each further one (0.5 ms ... 8 ms):
#: on an H100 a moment's disturbance, with nothing else on the GPU, lasted through six retakes
#: taken back to back (every one enqueued late, the last one kept 29 % slow).
BACKOFF_S = 0.5e-3


def l2_flusher(cuda):
    """A function that evicts the L2 cache by writing a buffer of twice its size, in a kernel
    that lasts at least :data:`BUSY_NS` nanoseconds. Its buffer is allocated and its kernel
    compiled now; no kernel runs until it is called."""
    import numpy as np

    l2_bytes = int(getattr(cuda.get_current_device(), "L2_CACHE_SIZE", 0) or (64 << 20))
    buf = cuda.device_array(max(2 * l2_bytes, 1 << 20) // 4, np.uint32)

    @cuda.jit
    def _fill(b, value, busy_ns):
        i = cuda.grid(1)
        if i < b.size:
            b[i] = value
        if i == 0:  # one thread keeps the kernel, so the GPU, busy for busy_ns
            for _ in range(busy_ns // 1000):
                cuda.nanosleep(1000)

    threads = 256
    blocks = (buf.size + threads - 1) // threads
    counter = [0]
    compiled_for(_fill, (buf, 0, BUSY_NS), _own("l2_flusher._fill"))

    def flush():
        counter[0] += 1
        _fill[blocks, threads](buf, counter[0], BUSY_NS)

    return flush


_FILLERS: dict = {}


def _filler(is_float: bool):
    """The fill kernel of floats or of integers (one per process)."""
    global cuda  # a module global, which the simulator swaps for its own in a kernel's globals
    if is_float not in _FILLERS:
        from numba import cuda

        @cuda.jit
        def fill(a, seed, low, high):
            i = cuda.grid(1)
            if i < a.size:
                h = (i * 2654435761 + seed * 40503 + 12345) % 16777216
                if is_float:
                    a[i] = low + (high - low) * (h / 16777216.0)
                    if a[i] >= high:  # rounded up to high in the array's precision
                        a[i] = low
                else:
                    a[i] = low + h % (high - low)

        _FILLERS[is_float] = fill
    return _FILLERS[is_float]


def device_random_later(cuda, shape: tuple[int, ...], dtype, seed: int = 0, low=None,
                        high=None):
    """A device array of ``shape``, allocated now, and a function that fills it on the GPU with
    hashed values in ``[low, high)`` (the exercise's :attr:`Timing.input_ranges
    <autograder.exercises.base.Timing.input_ranges>`; default: floats in [0, 1), ints in
    [0, 1000); an integer range's values reach at most ``low + 2**24 - 1``); the fill kernel is
    compiled now, so nothing runs on the GPU before that function is called. Returns
    (array, fill)."""
    import numpy as np

    from autograder.exercises.base import TIMING_FLOAT_RANGE, TIMING_INT_RANGE

    dtype = np.dtype(dtype)
    arr = cuda.device_array(int(np.prod(shape)), dtype)
    threads = 256
    is_float = bool(np.issubdtype(dtype, np.floating))
    default = TIMING_FLOAT_RANGE if is_float else TIMING_INT_RANGE
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    low, high = (float(low), float(high)) if is_float else (int(low), int(high))
    kernel = _filler(is_float)
    compiled_for(kernel, (arr, seed, low, high), _own(f"_filler.fill[{is_float}]"))

    def fill() -> None:
        kernel[(arr.size + threads - 1) // threads, threads](arr, seed, low, high)

    return arr.reshape(shape), fill


def settled(stats: RatioStats, thresholds: tuple[float, float] | None) -> bool:
    """True when ``stats``' 95 % interval lies wholly at or below ``thresholds[0]`` (the ratio
    for full points) or at or above ``thresholds[1]`` (the ratio for none): more rounds would
    not change the points. False without thresholds."""
    if thresholds is None:
        return False
    full_ratio, zero_ratio = thresholds
    return stats.high <= full_ratio or stats.low >= zero_ratio


def time_pair(cuda, launch_a, launch_b, flush, *, min_rounds: int = 10, max_rounds: int = 200,
              target_rse: float = 0.01, budget_s: float = 10.0, warmup: int = 3,
              thresholds: tuple[float, float] | None = None, before=None,
              after_round=None) -> dict:
    """Time ``launch_a(r)`` against ``launch_b(r)`` (``r``: round index, for input rotation).

    ``flush()`` runs before every sample (:func:`l2_flusher`: it also keeps the GPU busy while
    the host enqueues the sample); a sample the host took longer than :data:`HOST_WINDOW_S` to
    enqueue, or one :func:`disturbed` by other work (judged against the ``warmup`` launches'
    times and the samples before it), is taken again (at most :data:`RETRIES` times). After
    ``min_rounds``, sampling stops at ``target_rse`` or once the
    ratio a/b has :func:`settled` against ``thresholds`` (full-points ratio, no-points ratio):
    a kernel six times slower than the instructor's needs no 1 % precision to get no points.
    ``before(side, r)`` (``side`` 0 for a, 1 for b) runs before every sample's flush, retakes
    included, and ``after_round(r)`` after each timed round's last end event: the checks of
    :class:`autograder.timing.outputs.LaunchChecks`, outside every timed region. Returns
    ``{"a_ms": [...], "b_ms": [...], "seconds": wall time, "retaken": samples taken again
    (disturbed or enqueued late), "late": those enqueued late, "warmup_ms": ([a's], [b's])}``
    with one sample of each per round. Before each retake it waits (:data:`BACKOFF_S`,
    doubled each time)."""
    seeds: tuple[list, list] = ([], [])  # the warm-up's times: what a disturbed sample is judged by
    for r in range(warmup):
        for launch, seed in ((launch_a, seeds[0]), (launch_b, seeds[1])):
            flush()
            start, end = cuda.event(), cuda.event()
            start.record()
            launch(r)
            end.record()
            end.synchronize()
            seed.append(cuda.event_elapsed_time(start, end))
    cuda.synchronize()
    a_ms, b_ms = [], []
    retaken, late = [0, 0], 0  # samples taken again: disturbed (per side), enqueued late
    start_wall = time.perf_counter()
    for r in range(max_rounds):
        pair = [(a_ms, launch_a, 0), (b_ms, launch_b, 1)]
        for samples, launch, side in (pair if r % 2 == 0 else pair[::-1]):
            for attempt in range(RETRIES + 1):
                if attempt:  # a moment's disturbance passes
                    time.sleep(BACKOFF_S * 2 ** (attempt - 1))
                if before is not None:
                    before(side, r)
                flush()
                start, end = cuda.event(), cuda.event()
                queued = time.perf_counter()
                start.record()
                launch(r)
                end.record()
                queued = time.perf_counter() - queued
                end.synchronize()
                ms = cuda.event_elapsed_time(start, end)
                if attempt == RETRIES:
                    break
                if queued > HOST_WINDOW_S:
                    late += 1
                    continue
                if (retaken[side] < 1 + DISTURBED_MAX_SHARE * len(samples)
                        and disturbed(ms, seeds[side] + samples)):
                    retaken[side] += 1
                    continue
                break
            samples.append(ms)
        if after_round is not None:
            after_round(r)
        if len(a_ms) >= min_rounds:
            stats = ratio_stats(a_ms, b_ms)
            if stats.rse < target_rse or settled(stats, thresholds):
                break
        if time.perf_counter() - start_wall > budget_s:
            break
    return {"a_ms": a_ms, "b_ms": b_ms, "seconds": time.perf_counter() - start_wall,
            "retaken": sum(retaken) + late, "late": late, "warmup_ms": seeds}


def disturbed(ms: float, earlier: list[float]) -> bool:
    """True when a sample of ``ms`` milliseconds is more than :data:`DISTURBED` slower than the
    median of its kernel's ``earlier`` samples (at least :data:`DISTURBED_AFTER` of them)."""
    return len(earlier) >= DISTURBED_AFTER and ms > (1 + DISTURBED) * statistics.median(earlier)


@dataclass(frozen=True)
class RatioStats:
    """Geometric mean of per-round ratios a/b, its relative standard error and 95 % interval."""

    ratio: float
    rse: float
    low: float
    high: float
    rounds: int


def ratio_stats(a_ms: list[float], b_ms: list[float]) -> RatioStats:
    logs = [math.log(a / b) for a, b in zip(a_ms, b_ms) if a > 0 and b > 0]
    n = len(logs)
    if n == 0:
        return RatioStats(float("inf"), float("inf"), float("inf"), float("inf"), 0)
    mean = statistics.fmean(logs)
    se = statistics.stdev(logs) / math.sqrt(n) if n > 1 else float("inf")
    return RatioStats(math.exp(mean), se, math.exp(mean - 1.96 * se), math.exp(mean + 1.96 * se), n)


def self_check_problem(self_a_ms: list[float], self_b_ms: list[float]) -> str | None:
    """Why timing verdicts cannot be trusted on this GPU now, or None when they can."""
    s = ratio_stats(self_a_ms, self_b_ms)
    if abs(s.ratio - 1.0) > SELF_CHECK_TOLERANCE:
        return (f"the GPU is not stable enough to judge timing: the instructor's kernel against "
                f"itself gave a ratio of {s.ratio:.3f} (allowed: 1 ± {SELF_CHECK_TOLERANCE:.2f}); "
                "a throttled or shared GPU. Ask your instructor to re-run the timing test")
    return None


def verdict(student_ms: list[float], instructor_ms: list[float], full_ratio: float,
            zero_ratio: float, max_points: float) -> tuple[float, RatioStats, str]:
    """Points for the ratio student / instructor: full at ≤ ``full_ratio``, none at
    ≥ ``zero_ratio``, linear in between. Returns (points, stats, message)."""
    s = ratio_stats(student_ms, instructor_ms)
    if s.ratio <= full_ratio:
        points = max_points
    elif s.ratio >= zero_ratio:
        points = 0.0
    else:
        points = max_points * (zero_ratio - s.ratio) / (zero_ratio - full_ratio)
    msg = (f"your kernel: {statistics.median(student_ms):.3f} ms, the instructor's: "
           f"{statistics.median(instructor_ms):.3f} ms (medians of {s.rounds} interleaved "
           f"rounds); ratio {s.ratio:.2f}x (95% CI {s.low:.2f}–{s.high:.2f}); full points at "
           f"≤ {full_ratio:.2f}x, none at ≥ {zero_ratio:.2f}x")
    return round(points, 2), s, msg


def _constants(value) -> dict | None:
    if isinstance(value, dict) and all(isinstance(k, str) and type(v) is int
                                       for k, v in value.items()):
        return value
    return None


def reference_details(reference) -> dict | None:
    """The parts of the child's :attr:`TimingSamples.reference
    <autograder.wire.protocol.TimingSamples.reference>` that fit their types, for the timing
    test's details: ``name`` (the reference's file name), ``constants`` and
    ``student_constants`` (name → int), ``compared`` (``[name, name, ratio]`` per comparison
    of the choice) and ``choice_seconds``; None for anything but a dict."""
    if not isinstance(reference, dict):
        return None
    out: dict = {}
    if isinstance(reference.get("name"), str):
        out["name"] = reference["name"][:200]
    for key in ("constants", "student_constants"):
        if _constants(reference.get(key)) is not None:
            out[key] = dict(reference[key])
    compared = reference.get("compared")
    if isinstance(compared, list) and all(
            isinstance(c, list) and len(c) == 3 and isinstance(c[0], str)
            and isinstance(c[1], str) and isinstance(c[2], (int, float)) for c in compared):
        out["compared"] = [[a[:200], b[:200], float(r)] for a, b, r in compared]
    if isinstance(reference.get("choice_seconds"), (int, float)):
        out["choice_seconds"] = float(reference["choice_seconds"])
    return out


def configuration_text(reference) -> str | None:
    """The timing message's words where the student's constants differ from those of the
    instructor's kernel it was timed against, e.g. ``"your TILE_WIDTH 2 against the
    instructor's 16: ..."``; None where they do not, or ``reference`` (the child's
    :attr:`TimingSamples.reference <autograder.wire.protocol.TimingSamples.reference>`: its
    ``constants`` and ``student_constants``, name → int) does not say."""
    if not isinstance(reference, dict):
        return None
    theirs = _constants(reference.get("constants"))
    yours = _constants(reference.get("student_constants"))
    if theirs is None or yours is None:
        return None
    differ = [name for name in yours if name in theirs and yours[name] != theirs[name]]
    if not differ:
        return None
    mine = " and ".join(f"{name} {yours[name]}" for name in differ)
    instructor = " and ".join(str(theirs[name]) for name in differ)
    return (f"your {mine} against the instructor's {instructor}: the instructor's kernel is "
            "timed at its own configuration (its constants and the launch they give), so the "
            "block shape you chose is part of your kernel's time (see the lecture on block "
            "granularity)")


def timing_details(student_ms: list[float], instructor_ms: list[float], stats: RatioStats,
                   full_ratio: float, zero_ratio: float, params: dict) -> dict:
    """The timing test's ``details`` (JSON): both kernels' samples in ms (rounded to 1 ns),
    the ratio student / instructor with its 95 % interval, the thresholds and the size timed."""
    return {"timing": {
        "student_ms": [round(float(x), 6) for x in student_ms],
        "instructor_ms": [round(float(x), 6) for x in instructor_ms],
        "ratio": stats.ratio, "low": stats.low, "high": stats.high, "rounds": stats.rounds,
        "full_ratio": full_ratio, "zero_ratio": zero_ratio, "params": dict(params)}}
