"""A racy kernel gets the same verdict every time (issue 22): a shared-memory race or a barrier
that not every thread reaches, as the instrumented run finds it, fails every correctness case,
whatever outputs the launches happened to give (:func:`autograder.judge.cases.apply_race_verdict`).

The judge-level tests feed the same race report with outputs that a lucky and an unlucky
schedule would give (all right, some wrong, a case that timed out) and need no child; the
simulator tests grade real racy kernels at two secret seeds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from autograder import exercises
from autograder.judge import diagnostics
from autograder.judge import collect as judge
from autograder.grading import plan
from autograder.judge.cases import RACE_RULE, apply_race_verdict
from autograder.judge.inputs import Children, Grading
from autograder.wire.results import Kind, Status, TestResult
from autograder.sandbox.run import ChildRun
from autograder.source.submission import Source, load_source

from conftest import EXERCISES, ROOT, SEED, TEST_DEVICE, grade_file, graded_once

RACE = {"kind": "RAW", "array": "tile", "first": {"line": 25, "access": "write", "thread": [0, 0, 0]},
        "second": {"line": 31, "access": "read", "thread": [8, 0, 0]}, "params": {"width": 37}}
BARRIER = {"lines": [28], "exited": 231, "live_threads": 256, "fewest_threads": 25,
           "params": {"width": 37}}
CLEAN = {"races": [], "divergent_barriers": [], "out_of_bounds": []}


def _tests(statuses) -> list[TestResult]:
    out = [TestResult(name=f"case {i}", kind=Kind.CORRECTNESS,
                      visibility="public" if i < 2 else "hidden", status=s,
                      points=5.0 if s is Status.PASSED else 0.0, max_points=5.0,
                      message="as observed")
           for i, s in enumerate(statuses)]
    return out + [TestResult(name="concept", kind=Kind.CONCEPT, visibility="hidden",
                             status=Status.FAILED, points=0.0, max_points=15.0, message="x")]


def _verdicts(tests):
    return [(t.name, t.status, t.points, t.message) for t in tests]


# The outcomes different launches of one racy kernel gave (lucky, unlucky, hung, skipped).
SCHEDULES = [[Status.PASSED] * 6,
             [Status.PASSED, Status.FAILED, Status.PASSED, Status.FAILED, Status.PASSED,
              Status.PASSED],
             [Status.FAILED, Status.TIMEOUT, Status.TIMEOUT, Status.TIMEOUT, Status.SKIPPED,
              Status.ERROR]]


@pytest.mark.parametrize("finding", [{"races": [RACE]}, {"divergent_barriers": [BARRIER]}],
                         ids=["race", "divergent barrier"])
def test_a_race_decides_every_case_whatever_the_outputs_were(finding):
    ex = exercises.get("tiled_matmul")
    source = Source("\n" * 40, "submission.py")
    decided = []
    for statuses in SCHEDULES:
        tests = _tests(statuses)
        assert apply_race_verdict(Grading(exercise=ex, source=source, backend="gpu"), tests,
                                  {**CLEAN, **finding})
        decided.append(_verdicts(tests))
        assert [t.details["observed"] for t in tests[:6]] == [s.value for s in statuses]
    assert decided[0] == decided[1] == decided[2]
    cases = decided[0][:6]
    assert all(status is Status.FAILED and points == 0.0 for _, status, points, _ in cases)
    assert "line 25" in cases[0][3] or "line 28" in cases[0][3]
    assert RACE_RULE in cases[0][3]
    assert all("(see case 0)" in m for *_, m in cases[1:])
    assert decided[0][6] == ("concept", Status.FAILED, 0.0, "x")  # other tests untouched


def test_without_a_race_or_a_report_the_outputs_decide():
    ex = exercises.get("tiled_matmul")
    source = Source("", "submission.py")
    for report in (CLEAN, None, {"races": "garbled"}):
        tests = _tests(SCHEDULES[1])
        before = _verdicts(tests)
        assert not apply_race_verdict(Grading(exercise=ex, source=source, backend="gpu"),
                                      tests, report)
        assert _verdicts(tests) == before
    occupancy = exercises.get("occupancy")  # function exercise: no kernel, no instrumented run
    tests = _tests(SCHEDULES[0])
    assert not apply_race_verdict(Grading(exercise=occupancy, source=source, backend="gpu"),
                                  tests, {**CLEAN, "races": [RACE]})


def test_compute_sanitizer_findings_never_decide_a_case():
    """The sanitizer can be turned off (--no-sanitize): a verdict it decided would differ."""
    report = {**CLEAN}
    assert diagnostics.scheduling_hazards(Source("", "x.py"), report) == []
    assert diagnostics.scheduling_hazards(Source("", "x.py"), None) == []
    hazards = diagnostics.scheduling_hazards(Source("\n" * 40, "x.py"),
                                             {**CLEAN, "races": [RACE],
                                              "divergent_barriers": [BARRIER]})
    assert len(hazards) == 2 and "compute-sanitizer" not in " ".join(hazards)


def _run(ex, cases, wrong: set[int]) -> ChildRun:
    """A child's records: every case's guarded output right, except the ``wrong`` indices'."""
    from autograder.wire.buffers import guarded_output

    run = ChildRun(records=[({"type": "imported", "constants": {"TILE_WIDTH": 16}}, {})])
    for i, c in enumerate(cases):
        out = ex.reference(c.inputs, {**c.spec.params, "TILE_WIDTH": 16})["C"].astype(np.float32)
        if i in wrong:
            out = out + 1.0
        buf, margin = guarded_output(out.shape, np.float32)
        buf[margin:margin + out.size] = out.reshape(-1)
        run.records.append(({"type": "case", "id": c.id}, {"C": buf}))
    run.records.append(({"type": "done"}, {}))
    return run


def test_collect_gives_one_verdict_for_any_schedule_and_no_timing_points():
    """judge.collect with the same race report and the outputs of three schedules (all right,
    one wrong, most wrong): identical correctness verdicts, and the timing test gives nothing
    (on a GPU it is judged after the cases)."""
    ex = exercises.get("tiled_matmul")
    cases = [c for c in plan.make_cases(ex, 7) if c.spec.params["width"] <= 33]
    source = load_source(exercises.solution_path(ex))
    report = {**CLEAN, "races": [RACE]}
    seen = []
    grading = Grading(exercise=replace(ex, concept=None), source=source, backend="gpu",
                      cases=cases)
    for wrong in (set(), {1}, set(range(1, len(cases)))):
        kids = Children(run=_run(ex, cases, wrong))
        plain = judge.collect(grading, kids)
        assert sum(t.status is Status.PASSED for t in plain if t.kind is Kind.CORRECTNESS) \
            == len(cases) - len(wrong)
        tests = judge.collect(grading, kids, report)
        seen.append(_verdicts(tests))
        timing = tests[-1]
        assert timing.kind is Kind.TIMING and timing.status is Status.FAILED
        assert timing.points == 0.0
    assert seen[0] == seen[1] == seen[2]
    assert all(s is Status.FAILED for _, s, _, _ in seen[0][:-1])


# -- graded on the test device: real racy kernels, two secret seeds ------------------------------

RACY = [("transpose", EXERCISES / "transpose" / "mutants" / "missing_barrier.py"),
        ("tiled_matmul", ROOT / "tests" / "files" / "racy" / "early_return_matmul.py")]


@pytest.fixture(scope="module", params=RACY, ids=[p.stem for _, p in RACY])
def graded_twice(request):
    name, path = request.param
    return name, [graded_once(path, name, seed=seed) for seed in (SEED, 99)]


def test_a_racy_kernel_gets_the_same_verdicts_at_two_seeds(graded_twice):
    name, (a, b) = graded_twice
    assert a.seed != b.seed

    def verdicts(result):
        return [(t.name, t.status, t.points) for t in result.tests if t.kind is Kind.CORRECTNESS]

    assert verdicts(a) == verdicts(b)
    assert a.score == b.score
    for t in a.tests:
        if t.kind is Kind.CORRECTNESS:
            assert t.status is Status.FAILED and t.details["decided_by"] == "race", t.message
    first = next(t for t in a.tests if t.kind is Kind.CORRECTNESS)
    assert "race on shared array" in first.message or "a barrier reached by only" in first.message
    if TEST_DEVICE == "gpu":
        timing = next(t for t in a.tests if t.kind is Kind.TIMING)
        assert timing.status is Status.FAILED and timing.points == 0.0


@pytest.mark.gpu
@pytest.mark.parametrize("name, path", RACY, ids=[p.stem for _, p in RACY])
def test_on_a_gpu_a_racy_kernel_gets_one_verdict_beside_other_gradings(name, path):
    """KERNELGRADE_TEST_DEVICE=gpu: five gradings of one racy file at one seed, four two at a time
    (each one's GPU work beside the other's), sanitizer on and off: the same correctness
    verdicts and score every time (issue 22: 10, 20 and 25 points in one class)."""
    from concurrent.futures import ThreadPoolExecutor

    from autograder.grader import gpu_available

    if TEST_DEVICE != "gpu" or not gpu_available():
        pytest.skip("needs a CUDA GPU (KERNELGRADE_TEST_DEVICE=gpu)")
    results = [grade_file(path, name)]  # alone first: its preflight is then remembered
    with ThreadPoolExecutor(2) as pool:
        results += list(pool.map(lambda sanitize: grade_file(path, name, sanitize=sanitize),
                                 [True, False, True, False]))
    verdicts = {tuple((t.name, t.status, t.points) for t in r.tests
                      if t.kind is Kind.CORRECTNESS) for r in results}
    assert len(verdicts) == 1 and len({r.score for r in results}) == 1
    assert all(s is Status.FAILED for _, s, _ in next(iter(verdicts)))


@pytest.mark.parametrize("sanitize", [True, False])
def test_on_a_gpu_the_instrumented_run_happens_with_the_sanitizer_on_or_off(monkeypatch,
                                                                            tmp_path, sanitize):
    """The race rule reads the instrumented run, so --no-sanitize must not turn it off: the
    GPU path starts it (a simulator child, phase ``instrument``) either way. No GPU: the
    children are fakes."""
    from autograder.grading import children
    from autograder.sandbox.limits import Limits

    started = []

    def fake_run_child(request, backend, limits, work, **kw):
        started.append((backend, tuple(request["phases"]), bool(kw.get("wrapper"))))
        return ChildRun(records=[({"type": "hello"}, {})])

    monkeypatch.setattr(children, "run_child", fake_run_child)
    ex = exercises.get("transpose")
    source = load_source(EXERCISES / "transpose" / "mutants" / "missing_barrier.py")
    (tmp_path / "submission.py").write_text(source.text)
    kids = children.run_all(Grading(exercise=ex, source=source, backend="gpu",
                                    cases=plan.make_cases(ex, 1), limits=Limits(), seed=1,
                                    sanitize=sanitize), tmp_path)
    assert ("sim", ("instrument",), False) in started
    assert kids.instrumented is not None


def test_the_class_view_counts_a_race_decided_grading_as_a_race():
    from autograder.report import class_view
    from autograder.wire.results import ExerciseResult

    tests = _tests(SCHEDULES[1])
    apply_race_verdict(Grading(exercise=exercises.get("tiled_matmul"),
                               source=Source("\n" * 40, "x.py"), backend="sim"),
                       tests, {**CLEAN, "races": [RACE]})
    cats = class_view.categories(ExerciseResult("tiled_matmul", "x.py", "sim", tests))
    assert "race or divergent barrier: every correctness case counted as failed" in cats
    assert "wrong values in the output" not in cats


def test_two_plain_stores_stay_a_diagnostic_while_a_store_beside_an_atomic_decides():
    """A halo element stored by two threads (write/write) cannot change with the schedule: the
    outputs decide. A plain store racing with an atomic update (bins zeroed without a barrier
    before the atomics) can: the race decides."""
    ex = exercises.get("tiled_matmul")
    source = Source("\n" * 40, "submission.py")
    stores = {**RACE, "kind": "WAW", "second": {**RACE["second"], "access": "write"}}
    tests = _tests(SCHEDULES[1])
    grading = Grading(exercise=ex, source=source, backend="gpu")
    assert not apply_race_verdict(grading, tests, {**CLEAN, "races": [stores]})
    assert [t.status for t in tests[:6]] == SCHEDULES[1]
    with_atomic = {**stores, "second": {**stores["second"], "access": "atomic"}}
    tests = _tests(SCHEDULES[0])
    assert apply_race_verdict(grading, tests, {**CLEAN, "races": [with_atomic]})
    assert all(t.status is Status.FAILED for t in tests[:6])


# -- races in global memory (issue 30) ----------------------------------------------------------

GLOBAL = {"kind": "RAW", "array": "out", "space": "global", "scope": "block", "index": [4],
          "first": {"line": 25, "access": "write", "thread": [4, 0, 0]},
          "second": {"line": 27, "access": "read", "thread": [5, 0, 0]}, "params": {"n": 100},
          "values_differ": True}


def test_a_global_race_decides_every_case_as_a_shared_one_does():
    ex = exercises.get("block_scan")
    source = Source("\n" * 40, "submission.py")
    grid = {**GLOBAL, "scope": "grid", "first": {**GLOBAL["first"], "block": [0, 0, 0]},
            "second": {**GLOBAL["second"], "block": [1, 0, 0]}}
    for race, where in ((GLOBAL, "with no barrier between them"),
                        (grid, "in two blocks, with no fence protocol")):
        tests = _tests(SCHEDULES[0])   # every output right: the simulator's serial order
        assert apply_race_verdict(Grading(exercise=ex, source=source, backend="sim"), tests,
                                  {**CLEAN, "races": [race]})
        assert all(t.status is Status.FAILED and t.points == 0.0 for t in tests[:6])
        assert "race on global array out (out[4])" in tests[0].message
        assert where in tests[0].message and RACE_RULE in tests[0].message


def test_global_stores_of_one_value_stay_a_diagnostic_and_of_two_values_decide():
    """Every thread storing the block's sum (one value) cannot change with the schedule; every
    thread storing its own value leaves the last one to run, which the simulator chose."""
    ex = exercises.get("block_sum")
    source = Source("\n" * 40, "submission.py")
    grading = Grading(exercise=ex, source=source, backend="sim")
    stores = {**GLOBAL, "kind": "WAW", "second": {**GLOBAL["second"], "access": "write"}}
    tests = _tests(SCHEDULES[0])
    assert not apply_race_verdict(grading, tests, {**CLEAN, "races": [{**stores,
                                                                        "values_differ": False}]})
    assert all(t.status is Status.PASSED for t in tests[:6])
    assert apply_race_verdict(grading, tests, {**CLEAN, "races": [stores]})
    assert all(t.status is Status.FAILED for t in tests[:6])


GLOBAL_RACY = [(name, EXERCISES / name / "mutants" / f"{stem}.py")
               for name, stem in (("block_scan", "chain_in_global_memory"),
                                  ("block_sum", "partial_added_without_atomic"))]


@pytest.mark.parametrize("name, path", GLOBAL_RACY, ids=[p.stem for _, p in GLOBAL_RACY])
def test_a_kernel_racing_in_global_memory_loses_every_case_its_outputs_passed(name, path):
    """Issue 30: exact on the simulator (its threads run one at a time, in order), so the
    outputs pass there; the race decides, on either backend (on a GPU the outputs may pass or
    fail by the threads' luck: the verdict is the race's either way)."""
    result = graded_once(path, name)
    cases = [t for t in result.tests if t.kind is Kind.CORRECTNESS]
    assert cases and all(t.status is Status.FAILED and t.points == 0.0 for t in cases)
    assert all(t.details["decided_by"] == "race" for t in cases)
    ran = [t for t in cases if t.details["observed"] != "skipped"]
    assert ran
    if result.device == "sim":
        assert all(t.details["observed"] == "passed" for t in ran)
    assert "race on global array" in cases[0].message


def test_where_the_simulator_cannot_run_the_kernel_the_gpus_own_racecheck_decides():
    """A red-team kernel put ``cuda.syncwarp()`` first: its instrumented run stopped there (no
    warp intrinsics on the simulator), no race was found, and on a GPU its outputs kept 60
    correctness and 25 timing points. Where the instrumented run hit the simulator's limit,
    compute-sanitizer's racecheck and synccheck on the GPU decide every case as a race found by
    the instrumented run would; without a finding, or without the limit, the outputs decide."""
    from autograder.judge.cases import apply_sanitizer_verdict
    from autograder.judge.sanitizer import Finding, Report

    ex = exercises.get("block_sum")
    source = Source("\n" * 40, "submission.py")
    limited = {**CLEAN, "runs": [{"error": {"message": "SimulatorLimit: cuda.syncwarp is not "
                                                      "run by Numba's CUDA simulator"}}]}
    racy = {"racecheck": Report("racecheck", 1, [Finding("shared memory hazard", [23])]),
            "synccheck": Report("synccheck", 0, [])}
    clean = {"racecheck": Report("racecheck", 0, []), "synccheck": Report("synccheck", 0, [])}
    assert judge.report_limit(limited)
    grading = Grading(exercise=ex, source=source, backend="gpu")
    tests = _tests(SCHEDULES[0])
    assert apply_sanitizer_verdict(grading, tests, racy)
    cases = [t for t in tests if t.kind is Kind.CORRECTNESS]
    assert all(t.status is Status.FAILED and t.points == 0 for t in cases)
    assert all(t.details["decided_by"] == "sanitizer" for t in cases)
    assert "line 23" in cases[0].message and "racecheck" in cases[0].message
    for sanitized in (clean, {}):
        tests = _tests(SCHEDULES[0])
        before = _verdicts(tests)
        assert not apply_sanitizer_verdict(grading, tests, sanitized)
        assert _verdicts(tests) == before
    occupancy = exercises.get("occupancy")
    assert not apply_sanitizer_verdict(Grading(exercise=occupancy, source=source,
                                               backend="gpu"), _tests(SCHEDULES[0]), racy)


def test_collect_asks_the_sanitizer_only_on_a_gpu_where_the_simulator_stopped():
    from autograder.judge.sanitizer import Finding, Report

    ex = exercises.get("tiled_matmul")
    cases = [c for c in plan.make_cases(ex, 7) if c.spec.params["width"] <= 17]
    source = load_source(exercises.solution_path(ex))
    racy = {"racecheck": Report("racecheck", 1, [Finding("shared memory hazard", [30])])}
    limited = {**CLEAN, "runs": [{"error": {"message": "SimulatorLimit: cuda.syncwarp is not "
                                                      "run by Numba's CUDA simulator"}}]}
    for backend, report, decided in (("gpu", limited, True), ("gpu", CLEAN, False),
                                     ("sim", limited, False)):
        grading = Grading(exercise=replace(ex, concept=None, timing=None), source=source,
                          backend=backend, cases=cases)
        kids = Children(run=_run(ex, cases, set()), sanitized=racy)
        tests = judge.collect(grading, kids, report)
        failed = [t for t in tests if t.kind is Kind.CORRECTNESS and t.status is Status.FAILED]
        assert bool(failed) == decided, (backend, [t.message for t in tests])
