"""The timing verdict, on synthetic samples; on a GPU (``KERNELGRADE_TEST_DEVICE=gpu``), the
timing of the solution and of kernels that skip work at the timing size (tests/files/timing)."""

import random
import subprocess
import sys
import textwrap

import pytest

from autograder.exercises import known_bad
from autograder.timing.measure import ratio_stats, self_check_problem, verdict
from conftest import FILES, assert_full_marks, env_with_root, grade_file, needs_gpu


def _noisy(base, n, noise, seed):
    rng = random.Random(seed)
    return [base * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def test_ratio_is_the_geometric_mean_of_paired_ratios_with_an_interval():
    s = ratio_stats([2.0, 8.0], [1.0, 1.0])
    assert s.ratio == pytest.approx(4.0)
    assert s.low < 4.0 < s.high
    assert s.rounds == 2


def test_equal_kernels_get_full_points():
    a, b = _noisy(2.0, 30, 0.01, 1), _noisy(2.0, 30, 0.01, 2)
    points, stats, msg = verdict(a, b, 1.25, 2.0, 25.0)
    assert points == 25.0
    assert 0.97 < stats.ratio < 1.03
    assert "95% CI" in msg


def test_a_kernel_six_times_slower_gets_nothing():
    points, stats, _ = verdict(_noisy(12.0, 20, 0.02, 3), _noisy(2.0, 20, 0.02, 4), 1.25, 2.0, 25.0)
    assert points == 0.0
    assert stats.ratio > 5


def test_points_fall_linearly_between_the_thresholds():
    points, _, _ = verdict([1.625] * 5, [1.0] * 5, 1.25, 2.0, 20.0)
    assert points == pytest.approx(10.0)


def test_self_check_flags_an_unstable_gpu_and_accepts_a_stable_one():
    assert self_check_problem(_noisy(1.0, 20, 0.01, 5), _noisy(1.0, 20, 0.01, 6)) is None
    problem = self_check_problem([1.2] * 10, [1.0] * 10)
    assert problem is not None and "1.200" in problem


def test_the_instructor_solution_is_run_with_the_students_constants(tmp_path):
    """A constant derived from the student's (a tile of BLOCK_SIZE + 14 elements) follows it:
    the instructor's kernel is timed at the student's sizes, never with a stale tile."""
    from autograder.child.timing import import_solution

    text = "BLOCK_SIZE = 256\nWIDTH = 15\nTILE = BLOCK_SIZE + WIDTH - 1\nOTHER = 3\n"
    module = import_solution(str(tmp_path / "s.py"), {"BLOCK_SIZE": 512}, text)
    assert (module.BLOCK_SIZE, module.TILE, module.OTHER) == (512, 526, 3)


def test_the_timing_request_is_the_same_whatever_the_student_wrote():
    """Issue 30: the student's code chooses nothing about the reference. Every timed exercise's
    request carries every instructor reference (the solution first, then its kernel with
    run-time loop bounds) and nothing taken from a submission: the child times against the
    fastest of them."""
    from autograder import exercises
    from autograder.grading import plan

    for exercise in exercises.all_exercises():
        if not exercise.timing:
            continue
        request = plan.timing_request(exercise, 5)
        paths = exercises.timing_solution_paths(exercise)
        assert request.solution_path == str(paths[0]) == str(exercises.solution_path(exercise))
        assert request.solution_source == paths[0].read_text(encoding="utf-8")
        assert [p for p, _ in request.more_solutions or []] == [str(p) for p in paths[1:]]
        if exercises.is_builtin(exercise.name):  # a course's own may have one reference
            assert len(paths) == 2, f"{exercise.name}: its _blockdim reference is a candidate"


def _scripted_references(ms: list[float]):
    """A scripted GPU and references whose launches take ``ms`` (one each)."""
    gpu = _ScriptedGPU()

    class Kernel:
        def __init__(self, t):
            self.t = t

        def __getitem__(self, config):
            def launch(*args):
                gpu.next_ms = self.t
            return launch

    refs = [{"name": f"ref{i}.py", "kernel": Kernel(t), "constants": {"TILE_WIDTH": 16},
             "grid": (4, 4), "block": (16, 16), "arg_sets": [[]]} for i, t in enumerate(ms)]
    return gpu, refs


@pytest.mark.usefixtures("scripted_host")
@pytest.mark.parametrize("ms,chosen", [([1.0, 1.3], 0), ([1.3, 1.0], 1), ([1.2, 1.5, 1.0], 2)])
def test_the_fastest_instructor_reference_is_the_one_compared_with(ms, chosen):
    """Issue 30: where an exercise has several instructor references, the student is timed
    against the fastest on this GPU (measured, interleaved), whichever of them the student's
    code resembles; the record says which, with the ratios of the choice."""
    from autograder.child import timing as child_timing

    gpu, refs = _scripted_references(ms)
    best, compared, _ = child_timing.choose_reference(gpu, refs, lambda: None)
    assert best == chosen
    assert len(compared) == len(ms) - 1
    assert compared[0] == ["ref0.py", "ref1.py", pytest.approx(ms[0] / ms[1], rel=1e-3)]

    class Student:
        def __getitem__(self, config):
            def launch(*args):
                gpu.next_ms = 1.2
            return launch

    prepared = {"references": refs, "arg_sets": [[]], "grid": (8, 8), "block": (8, 8),
                "flush": lambda: None, "min_rounds": 4, "budget_s": 5.0,
                "thresholds": (1.25, 2.0), "constants": {"TILE_WIDTH": 8}}
    rec = child_timing.measure_timing(gpu, Student(), prepared)
    assert set(rec["instructor_ms"]) == {min(ms)} and set(rec["self_a_ms"]) == {min(ms)}
    assert rec["reference"]["name"] == f"ref{chosen}.py"
    assert rec["reference"]["constants"] == {"TILE_WIDTH": 16}
    assert rec["reference"]["student_constants"] == {"TILE_WIDTH": 8}
    from autograder.wire.protocol import TimingSamples

    sent = TimingSamples.from_header(TimingSamples(**rec).to_header())  # as the harness sends it
    assert sent.reference == rec["reference"]


def test_one_reference_needs_no_choice():
    from autograder.child import timing as child_timing

    _, refs = _scripted_references([1.0])
    assert child_timing.choose_reference(None, refs, None) == (0, [], 0.0)


_SIM_TIMING = textwrap.dedent('''
    import numpy as np
    from dataclasses import replace
    from numba import cuda
    from autograder import exercises
    from autograder.child import timing as child_timing
    from autograder.simulator.adapter import prepare_simulator
    from autograder.grading import plan
    from autograder.timing import measure
    from autograder.timing.outputs import wrong_launches

    prepare_simulator()
    measure.HOST_WINDOW_S = float("inf")  # a simulated launch is slow to enqueue: no retakes
    measure.l2_flusher = lambda cuda: (lambda: None)  # no 128 MB flush on the simulator
    child_timing.TIMING_COPIES = 2
    timed_pair = measure.time_pair


    def time_pair(cuda, a, b, flush, **kw):  # two or three rounds: the simulator is slow
        kw.update(warmup=0, min_rounds=2, max_rounds=min(3, kw.get("max_rounds", 3)))
        return timed_pair(cuda, a, b, flush, **kw)


    measure.time_pair = time_pair


    class Clock:
        """The simulator's cuda, with events that read what the last timed launch took."""

        def __init__(self):
            self.next_ms = 0.0

        def __getattr__(self, name):
            return getattr(cuda, name)

        def event(self):
            clock = self

            class Event:
                def record(self):
                    self.ms = clock.next_ms

                def synchronize(self):
                    pass
            return Event()

        def event_elapsed_time(self, start, end):
            return end.ms


    class Timed:
        """A kernel whose launches take ``ms`` on the clock (and run on the simulator)."""

        def __init__(self, kernel, ms):
            self.kernel, self.ms = kernel, ms

        def __getitem__(self, config):
            launch = self.kernel[config]

            def run(*args):
                clock.next_ms = self.ms
                launch(*args)
            return run

        def __getattr__(self, name):
            return getattr(self.kernel, name)


    clock = Clock()
    ex = exercises.get("block_sum")
    n = 512
    request = replace(plan.timing_request(ex, 7), params={"n": n},
                      input_specs={"x": ((n,), "<f4")}, outputs=ex.outputs({"n": n}),
                      min_rounds=4)
    solution = exercises.solution_path("block_sum")
    text = solution.read_text(encoding="utf-8")


    def measured(source, consts, ms, refs_ms):
        kernel = child_timing.import_solution(str(solution), consts, source).block_sum
        p = child_timing.prepare_timing(clock, kernel, ex.contract, consts, request)
        for ref, t in zip(p["references"], refs_ms):
            ref["kernel"] = Timed(ref["kernel"], t)
        timed = Timed(kernel, ms)
        child_timing.warm_up(clock, timed, p)
        rec = child_timing.measure_timing(clock, timed, p)
        verdict = wrong_launches(rec["checks"], ex.outputs(request.params),
                                 ex.tolerance.rel_frobenius, ex.tolerance.exact,
                                 len(rec["student_ms"]))
        return p, rec, verdict


    # A student at BLOCK_SIZE 64: the instructor's kernels run at their own 256 (4x fewer
    # partial sums), the faster of them timed (here the run-time-bounds one); the student's
    # outputs are checked against the instructor's solution run at 64.
    p, rec, verdict = measured(text, {"BLOCK_SIZE": 64}, 1.5, [1.3, 1.0])
    assert [r["name"] for r in p["references"]] == ["block_sum.py", "block_sum_blockdim.py"]
    for r in p["references"]:
        assert r["constants"] == {"BLOCK_SIZE": 256}, r
        assert tuple(r["block"]) == (256,) and tuple(r["grid"]) == (2,), r
        assert r["arg_sets"][0][1].shape == (2,)
    assert tuple(p["block"]) == (64,) and tuple(p["grid"]) == (8,)
    assert p["arg_sets"][0][1].shape == (8,) and len(p["arg_sets"]) == 2
    assert rec["reference"]["name"] == "block_sum_blockdim.py", rec["reference"]
    assert rec["reference"]["constants"] == {"BLOCK_SIZE": 256}
    assert rec["reference"]["student_constants"] == {"BLOCK_SIZE": 64}
    assert set(rec["instructor_ms"]) == {1.0} and set(rec["student_ms"]) == {1.5}
    assert verdict.message is None, verdict
    assert all(row[0][2] == 0 and row[0][3] == 0 for row in rec["checks"]), rec["checks"]

    # At its own BLOCK_SIZE 64, a kernel that skips its work at the timing size: every timed
    # launch is wrong, though its outputs have another shape than the timed reference's.
    skips = text.replace("    sums = cuda.shared.array", "    if x.shape[0] == 512:\\n"
                         "        return\\n    sums = cuda.shared.array", 1)
    assert skips != text
    _, rec, verdict = measured(skips, {"BLOCK_SIZE": 64}, 0.1, [1.0, 1.3])
    assert verdict.message and "gave wrong results" in verdict.message, verdict
    assert "partial: 8 elements NaN" in verdict.message, verdict

    # At the instructor's constants the expected outputs come from the timed kernel itself.
    p, rec, verdict = measured(text, {"BLOCK_SIZE": 256}, 1.0, [1.0, 1.3])
    assert verdict.message is None
    assert rec["reference"]["student_constants"] == {"BLOCK_SIZE": 256}

    # Issue 30's red team: at every timed launch a kernel reads the grader's buffers beside its
    # own output (out of bounds on a GPU): the arrays of the expected outputs and every timed
    # reference's outputs. (a) copies one that holds the answer to its inputs and does no work;
    # (b) writes zeros into all of them and into its own output (0/0). Neither may pass.
    grader_arrays = []
    real_checks = child_timing.LaunchChecks

    def recording(cuda_, student, expected, *args, **kw):
        grader_arrays.extend(arr for outs in expected for arr in outs)
        return real_checks(cuda_, student, expected, *args, **kw)

    child_timing.LaunchChecks = recording

    class Cheat:
        def __init__(self, kernel, how, consts):
            self.kernel, self.how, self.size = kernel, how, consts["BLOCK_SIZE"]
            self.found = 0

        def __getitem__(self, config):
            def run(x, partial):
                clock.next_ms = 0.02
                reachable = grader_arrays + [r["arg_sets"][c][1] for r in self.refs
                                             for c in range(len(r["arg_sets"]))]
                if self.how == "zeros":
                    for arr in reachable + [partial]:
                        arr.copy_to_device(np.zeros(arr.shape, arr.dtype))
                    return
                xs = x.copy_to_host().astype(np.float64)
                answer = np.add.reduceat(xs, np.arange(0, xs.size, self.size))
                for arr in reachable:
                    got = arr.copy_to_host()
                    if got.shape == answer.shape and np.allclose(got, answer, rtol=1e-4):
                        partial.copy_to_device(got)
                        self.found += 1
                        return
            return run

        def __getattr__(self, name):
            return getattr(self.kernel, name)

    for how in ("copy", "zeros"):
        for consts in ({"BLOCK_SIZE": 64}, {"BLOCK_SIZE": 256}):
            grader_arrays.clear()
            kernel = child_timing.import_solution(str(solution), consts, text).block_sum
            p = child_timing.prepare_timing(clock, kernel, ex.contract, consts, request)
            for ref in p["references"]:
                ref["kernel"] = Timed(ref["kernel"], 1.0)
            cheat = Cheat(kernel, how, consts)
            cheat.refs = p["references"]
            child_timing.warm_up(clock, cheat, p)
            rec = child_timing.measure_timing(clock, cheat, p)
            verdict = wrong_launches(rec["checks"], ex.outputs(request.params),
                                     ex.tolerance.rel_frobenius, ex.tolerance.exact,
                                     len(rec["student_ms"]))
            assert verdict.message and "gave wrong results" in verdict.message, (how, consts,
                                                                                  verdict)
            assert not verdict.grader_fault
            assert cheat.found == 0, (how, consts, cheat.found)
    print("ok")
''')


def test_the_instructors_kernel_is_timed_at_its_own_constants_on_the_simulator():
    """Issue 30, the child's timing run end to end on the simulator (a scripted clock for the
    events): a student at BLOCK_SIZE 64 is timed against the instructor's kernels at their own
    BLOCK_SIZE 256 and launch (grid and block from the contract at 256), the faster of the two
    references; its outputs, shaped by its own constants, are checked against the instructor's
    kernel run at 64, and a kernel that skips its work at the timing size fails those checks;
    a kernel that reads, or zeroes, the grader's buffers beside its output at every timed
    launch (issue 30's red team: the expected outputs, the timed references' outputs) finds
    no answer there and fails them too."""
    env = env_with_root(NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", _SIM_TIMING], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_a_self_check_off_for_a_moment_is_measured_again(monkeypatch):
    """A self-check disturbed for a moment (another process's GPU work) is taken again before
    the student's kernel is timed, instead of turning into a timing error; one that stays off
    is reported with its samples after ``SELF_CHECK_ATTEMPTS`` tries."""
    from autograder.timing import measure as timing
    from autograder.child import timing as child_timing

    def run(self_checks):
        calls = []

        def time_pair(cuda, a, b, flush, **kw):
            calls.append("self" if a is b else "main")
            if a is b:
                ms = self_checks[min(len(calls) - 1, len(self_checks) - 1)]
                return {"a_ms": [1.0] * 8, "b_ms": [ms] * 8, "seconds": 0.1}
            return {"a_ms": [2.0] * 8, "b_ms": [1.0] * 8, "seconds": 0.1}

        monkeypatch.setattr(timing, "time_pair", time_pair)
        reference = {"name": "s.py", "kernel": object(), "constants": {}, "grid": 1,
                     "block": 1, "arg_sets": [[]]}
        prepared = {"arg_sets": [[]], "grid": 1, "block": 1, "references": [reference],
                    "flush": None, "min_rounds": 8, "budget_s": 1.0}
        return calls, child_timing.measure_timing(None, object(), prepared)

    calls, rec = run([1.07, 1.0])
    assert calls == ["self", "self", "main"]
    assert timing.self_check_problem(rec["self_a_ms"], rec["self_b_ms"]) is None
    calls, rec = run([1.07])
    assert calls == ["self"] * child_timing.SELF_CHECK_ATTEMPTS + ["main"]
    assert timing.self_check_problem(rec["self_a_ms"], rec["self_b_ms"]) is not None


class _ScriptedGPU:
    """Enough of ``numba.cuda`` for :func:`autograder.timing.measure.time_pair`: each launch sets what
    the next event pair measures (milliseconds)."""

    def __init__(self):
        self.next_ms = 0.0

    def event(self):
        gpu = self

        class Event:
            def record(self):
                self.ms = gpu.next_ms

            def synchronize(self):
                pass
        return Event()

    def event_elapsed_time(self, start, end):
        return end.ms

    def synchronize(self):
        pass


@pytest.fixture
def scripted_host(monkeypatch):
    """A scripted GPU's launch is never enqueued late. On a loaded 2-core machine the Python
    of a scripted launch can itself take longer than ``HOST_WINDOW_S``, and each such sample
    was taken again and counted in ``retaken`` (CI, stop 28: 6 retakes where the disturbed
    ones are capped at 5). What these tests measure is the retake of disturbed samples."""
    from autograder.timing import measure as timing

    monkeypatch.setattr(timing, "HOST_WINDOW_S", float("inf"))


def _noisy_pair(ratio: float):
    """A launch pair whose times scatter by ±25 % (a deterministic pattern): a ratio of
    ``ratio`` that takes many rounds to pin to 1 %."""
    import itertools

    gpu = _ScriptedGPU()
    noise = itertools.cycle([1.0, 1.25, 0.8, 1.1, 0.9, 1.2, 0.75, 1.05])

    def launch(ms):
        def run(r):
            gpu.next_ms = ms * next(noise)
        return run
    return gpu, launch(ratio), launch(1.0)


@pytest.mark.usefixtures("scripted_host")
@pytest.mark.parametrize("ratio", [6.0, 0.5])
def test_sampling_stops_once_the_points_are_settled(ratio):
    """A kernel six times slower than the instructor's gets no points however precise its ratio:
    sampling stops after the minimum rounds once the interval lies above the no-points ratio (or
    below the full-points ratio), instead of running on to 1 % precision."""
    from autograder.timing import measure as timing

    gpu, a, b = _noisy_pair(ratio)
    settled = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, max_rounds=200,
                               budget_s=60, warmup=0, thresholds=(1.25, 2.0))
    assert len(settled["a_ms"]) == 10
    gpu, a, b = _noisy_pair(ratio)
    precise = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, max_rounds=200,
                               budget_s=60, warmup=0)
    assert len(precise["a_ms"]) > 10
    for run in (settled, precise):
        points, _, _ = timing.verdict(run["a_ms"], run["b_ms"], 1.25, 2.0, 25.0)
        assert points == (0.0 if ratio > 2 else 25.0)


@pytest.mark.usefixtures("scripted_host")
def test_a_ratio_between_the_thresholds_is_sampled_to_full_precision():
    from autograder.timing import measure as timing

    gpu, a, b = _noisy_pair(1.6)
    run = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, max_rounds=200, budget_s=60,
                           warmup=0, thresholds=(1.25, 2.0))
    stats = timing.ratio_stats(run["a_ms"], run["b_ms"])
    assert len(run["a_ms"]) > 10 and (stats.rse < 0.01 or len(run["a_ms"]) == 200)
    assert not timing.settled(stats, (1.25, 2.0))


def _steady_pair(student_ms: float, spikes: dict):
    """A student's launch of ``student_ms`` against an instructor's of 1 ms, every time, except
    the student's launches numbered in ``spikes`` (counting from 0, retakes included), which
    take that many ms: a moment of other work on the GPU."""
    gpu = _ScriptedGPU()
    count = [0]

    def student(r):
        gpu.next_ms = spikes.get(count[0], student_ms)
        count[0] += 1

    def instructor(r):
        gpu.next_ms = 1.0
    return gpu, student, instructor


@pytest.mark.usefixtures("scripted_host")
def test_a_disturbed_sample_is_taken_again(monkeypatch):
    """Issue 22: one slow sample among the 10 rounds of a settled measurement moved its ratio by
    3-5 % (0.929 against 0.899). A sample more than 10 % slower than its kernel's median so far
    is taken again: the ratio is the undisturbed one, and the record counts the retake."""
    from autograder.timing import measure as timing

    gpu, a, b = _steady_pair(0.9, {5: 1.4})
    run = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, warmup=0,
                           thresholds=(1.25, 2.0))
    assert run["retaken"] == 1 and len(run["a_ms"]) == 10
    assert timing.ratio_stats(run["a_ms"], run["b_ms"]).ratio == pytest.approx(0.9)
    monkeypatch.setattr(timing, "DISTURBED", float("inf"))  # what it was before
    gpu, a, b = _steady_pair(0.9, {5: 1.4})
    before = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, warmup=0,
                              thresholds=(1.25, 2.0))
    assert before["retaken"] == 0
    assert timing.ratio_stats(before["a_ms"], before["b_ms"]).ratio > 0.9 * 1.03


@pytest.mark.usefixtures("scripted_host")
def test_a_disturbed_first_sample_is_judged_by_the_warm_up():
    """The warm-up launches are timed too, so a sample disturbed in the first rounds is known
    as one (on an H100 a round-1 sample 44 % slow moved a settled ratio by 5.5 %)."""
    from autograder.timing import measure as timing

    gpu, a, b = _steady_pair(0.9, {4: 1.3})  # warm-up launches 0-2, then round 0 and round 1
    run = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, warmup=3,
                           thresholds=(1.25, 2.0))
    assert run["retaken"] == 1 and run["a_ms"][1] == 0.9


@pytest.mark.usefixtures("scripted_host")
def test_a_kernel_whose_launches_vary_keeps_its_samples():
    """A kernel whose own launches vary by more than 10 % is not retaken without end: one
    sample and a tenth of the rest at most are taken again, and every round still gets one
    sample of each."""
    from autograder.timing import measure as timing

    spikes = {i: 1.5 for i in range(1000) if i % 2}  # every other launch 1.5 ms, not 0.9
    gpu, a, b = _steady_pair(0.9, spikes)
    run = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, max_rounds=40, warmup=0)
    assert len(run["a_ms"]) == len(run["b_ms"]) <= 40
    rounds = len(run["a_ms"])
    assert 0 < run["retaken"] <= 1 + timing.DISTURBED_MAX_SHARE * rounds
    assert sum(1 for x in run["a_ms"] if x == 1.5) >= rounds / 2 - run["retaken"]


def test_a_sample_enqueued_late_is_taken_again_a_bounded_number_of_times(monkeypatch):
    """A sample the host took longer than ``HOST_WINDOW_S`` to enqueue may hold a gap: it is
    taken again, at most ``RETRIES`` times, the last one kept; every such retake is counted as
    ``late``, and ``retaken`` holds them too."""
    from autograder.timing import measure as timing

    monkeypatch.setattr(timing, "HOST_WINDOW_S", -1.0)  # every sample enqueued late
    monkeypatch.setattr(timing, "BACKOFF_S", 0.0)
    gpu, a, b = _steady_pair(0.9, {})
    run = timing.time_pair(gpu, a, b, lambda: None, min_rounds=10, warmup=0)
    samples = len(run["a_ms"]) + len(run["b_ms"])
    assert len(run["a_ms"]) == 10 and run["late"] == timing.RETRIES * samples
    assert run["retaken"] == run["late"]


# --- every timed launch checked (issue 20), on a GPU ----------------------------------------------

TIMING_GAMES = sorted((FILES / "timing").glob("*.py"))


def _timing_test(result):
    return next(t for t in result.tests if t.kind.value == "timing")


def _shown(result) -> str:
    return "\n".join(f"  {t.name}: {t.status.value} {t.message[:300]}" for t in result.tests)


@needs_gpu()
def test_the_solution_keeps_its_timing_points_with_every_launch_checked():
    from autograder import exercises

    solution = exercises.solution_path(exercises.get("tiled_matmul"))
    result = grade_file(solution, "tiled_matmul", sanitize=False)
    assert_full_marks(result)
    timing = _timing_test(result)
    assert timing.status.value == "passed" and timing.points == timing.max_points, timing.message
    print(f"\nsolution: {timing.message}")


@needs_gpu()
@pytest.mark.parametrize("path", TIMING_GAMES, ids=[p.stem for p in TIMING_GAMES])
def test_a_kernel_that_skips_work_at_the_timing_size_gets_no_timing_points(path):
    """Right at every tested size, wrong on some or all timed launches: the timing test fails and
    says which launch was wrong; a kernel whose game the poison defeats (it computes every
    launch) keeps its points, at no better ratio than honest work gives."""
    result = grade_file(path, "tiled_matmul", sanitize=False)
    print(f"\n{path.name}: {result.score}/{result.max_score}\n{_shown(result)}")
    assert all(t.status.value in ("passed", "skipped") for t in result.tests
               if t.kind.value == "correctness"), _shown(result)
    timing = _timing_test(result)
    expected = {e.status for e in known_bad.expectations(path) if e.selector == "timing"}
    assert expected and timing.status.value in expected, _shown(result)
    if timing.status.value == "failed":
        assert timing.points == 0.0
        assert "gave wrong results" in timing.message, timing.message
        assert "compute the whole result on every launch" in timing.message
    else:
        assert timing.details["timing"]["ratio"] > 0.5, timing.message


# --- the instructor's configuration (issue 30), on a GPU --------------------------------------------

CONFIG_FILES = FILES / "timing_config"


@needs_gpu()
def test_a_naive_kernel_at_a_tiny_tile_loses_its_timing_points():
    """Issue 30's game: a naive matmul at TILE_WIDTH 2 got 25/25 against the instructor's kernel
    compiled at 2 (0.35x); against the instructor's TILE_WIDTH 16 it gets no timing points, and
    the message says whose constants were timed."""
    path = CONFIG_FILES / "naive_tile2.py"
    result = grade_file(path, "tiled_matmul", sanitize=False)
    print(f"\n{path.name}: {result.score}/{result.max_score}\n{_shown(result)}")
    assert not known_bad.unmet(path, result), _shown(result)
    timing = _timing_test(result)
    assert timing.points == 0.0, timing.message
    assert "your TILE_WIDTH 2 against the instructor's 16" in timing.message
    reference = timing.details["timing"]["reference"]
    assert reference["constants"] == {"TILE_WIDTH": 16}
    assert reference["name"] in ("tiled_matmul.py", "tiled_matmul_blockdim.py")


@needs_gpu()
def test_timed_outputs_shaped_by_the_students_constants_are_checked():
    """A block sum at BLOCK_SIZE 64 has four times the instructor's partial sums: its timed
    launches are checked against the instructor's kernel run at 64, so skipping the work at
    the timing size fails; an honest 8x8-tile matmul is checked and timed, and told that its
    TILE_WIDTH is not the instructor's."""
    skips = CONFIG_FILES / "block_sum_64_skips_at_timing_size.py"
    result = grade_file(skips, "block_sum", sanitize=False)
    timing = _timing_test(result)
    print(f"\n{skips.name}: {timing.status.value} {timing.message[:300]}")
    assert timing.status.value == "failed" and "gave wrong results" in timing.message
    honest = grade_file(CONFIG_FILES / "tiled_tile8.py", "tiled_matmul", sanitize=False)
    timing = _timing_test(honest)
    print(f"tiled_tile8.py: {timing.points}/{timing.max_points} {timing.message[:400]}")
    assert timing.status.value in ("passed", "failed") and "wrong results" not in timing.message
    assert "your TILE_WIDTH 8 against the instructor's 16" in timing.message


RED_TEAM = [CONFIG_FILES / "reads_expected_out_of_bounds.py",
            CONFIG_FILES / "zeroes_expected_out_of_bounds.py"]


@needs_gpu()
@pytest.mark.parametrize("path", RED_TEAM, ids=[p.stem for p in RED_TEAM])
def test_no_timed_launch_passes_by_reading_or_writing_the_graders_answers(path):
    """Issue 30's red team: at the timing size a kernel copies the expected outputs it reaches
    out of bounds at a fixed offset into its own (a), or zeroes them and its own (b); 4bf1789
    gave both 25/25 timing points. No answer is in device memory while student code runs: no
    timing points (a check that fails, or an error where the kernel touches a freed buffer),
    while every correctness case passes."""
    result = grade_file(path, "tiled_matmul", sanitize=False)
    print(f"\n{path.name}: {result.score}/{result.max_score}\n{_shown(result)}")
    assert all(t.status.value in ("passed", "skipped") for t in result.tests
               if t.kind.value == "correctness"), _shown(result)
    timing = _timing_test(result)
    assert timing.points == 0.0 and timing.status.value in ("failed", "error"), timing.message
    if timing.status.value == "failed":
        assert "gave wrong results" in timing.message, timing.message
