"""The occupancy exercise's cases compared with the CUDA driver (autograder.grading.driver_occupancy): the
grader asks the driver in a process of its own and keeps the answers; the grading child gets the
GPU's limits as arguments and never the expected value, so a function that searches the child's
memory for it finds nothing. On the simulator the driver's answers are stood in for (the cases
run there too, made ``sim``); on a GPU (``KERNELGRADE_TEST_DEVICE=gpu``) the driver is asked."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace

import pytest

from autograder import exercises, grader
from autograder.grading import driver_occupancy
from autograder.grading import plan
from autograder.grader import gpu_available
from autograder.grading.driver_occupancy import Answers
from autograder.errors import GraderSetupError
from autograder.wire.results import Status
from conftest import ROOT, TEST_DEVICE, grade_file, needs_gpu, SOLUTIONS
from tests.adversarial.lift import reach_lifted  # noqa: F401 (a fixture: the hostile file runs)

HOSTILE = ROOT / "tests" / "adversarial" / "files" / "reads_expected.py"
SOLUTION = SOLUTIONS / "occupancy.py"
HOPPER = {"max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "shared_bytes_per_sm": 233472}


def _solution():
    spec = importlib.util.spec_from_file_location("occupancy_solution_for_tests", SOLUTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _driven(exercise) -> list:
    return [c for c in exercise.cases if c.params.get("against_driver")]


def _stand_in(monkeypatch) -> tuple[Answers, list]:
    """On the simulator: the driver's cases run (made ``sim``), and the driver's answers are a
    Hopper's by the solution's formula (what the driver says for a small kernel there). Returns
    them and the list of the queries made."""
    solution = _solution()
    threads = sorted({c.params["args"]["threads_per_block"] for c in
                      _driven(exercises.get("occupancy"))})
    fake = Answers("a stand-in GPU", dict(HOPPER), {
        t: solution.resident_blocks_per_sm(t, 0, *HOPPER.values()) for t in threads})
    asked = []

    def answers(exercise, threads):
        asked.append((exercise, list(threads)))
        return fake

    get = exercises.get
    real = get("occupancy")
    made_sim = replace(real, cases=[replace(c, sim=True) if c.params.get("against_driver")
                                    else c for c in real.cases])
    monkeypatch.setattr(driver_occupancy, "answers", answers)
    monkeypatch.setattr(grader.exercises, "get",
                        lambda name: made_sim if name == "occupancy" else get(name))
    return fake, asked


def _grade(path, monkeypatch):
    if TEST_DEVICE == "sim":
        _stand_in(monkeypatch)
    return grade_file(path, "occupancy", preflight=False)


def _driver_tests(result) -> list:
    names = {f"hidden: {c.label}" for c in _driven(exercises.get("occupancy"))}
    tests = [t for t in result.tests if t.name in names]
    assert len(tests) == len(names)
    return tests


def test_the_solution_agrees_with_the_driver(monkeypatch):
    result = _grade(SOLUTION, monkeypatch)
    for t in _driver_tests(result):
        assert t.status is Status.PASSED, t.message
        assert "max_threads_per_sm=" in t.message  # the GPU's limits were its arguments


def test_a_function_that_searches_the_child_for_the_expected_value_gets_nothing(
        monkeypatch, reach_lifted):
    result = _grade(HOSTILE, monkeypatch)
    for t in _driver_tests(result):
        assert t.status is Status.FAILED and t.points == 0, t.message
        assert "the driver's occupancy calculator says" in t.message  # -1: it found nothing
    assert result.score == 0


def test_the_child_gets_the_limits_as_arguments_and_never_the_answer(monkeypatch):
    fake, asked = _stand_in(monkeypatch)
    ex = grader.exercises.get("occupancy")
    cases = driver_occupancy.fill(ex, plan.make_cases(ex, 1), "sim")
    assert asked == [("occupancy", sorted(fake.blocks))]  # one query for every block size
    driven = [c for c in cases if c.spec.params.get("against_driver")]
    assert driven
    for c in driven:
        sent = c.request().to_dict()
        args = sent["params"]["args"]
        assert args == {"threads_per_block": args["threads_per_block"],
                        "shared_bytes_per_block": 0, **HOPPER}
        assert set(sent["params"]) == {"call", "against_driver", "args"}
        assert c.expected(ex.reference, c.spec.params) == {
            "value": fake.blocks[args["threads_per_block"]]}


def test_the_driver_s_cases_are_left_alone_where_they_do_not_run(monkeypatch):
    def never(*a):
        raise AssertionError("asked the driver for cases that do not run")

    monkeypatch.setattr(driver_occupancy, "answers", never)
    ex = exercises.get("occupancy")
    cases = plan.make_cases(ex, 1)
    assert driver_occupancy.fill(ex, cases, "sim") is cases  # GPU-only cases, on the simulator
    tiled = exercises.get("tiled_matmul")
    tiled_cases = plan.make_cases(tiled, 1)
    assert driver_occupancy.fill(tiled, tiled_cases, "gpu") is tiled_cases


def test_the_solution_is_never_asked_for_a_driver_s_case():
    case = _driven(exercises.get("occupancy"))[0]
    with pytest.raises(GraderSetupError, match="occupancy calculator was not asked"):
        exercises.get("occupancy").reference({}, case.params)


def test_answers_are_asked_once_and_kept_on_disk(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELGRADE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(driver_occupancy, "_memo", {})
    monkeypatch.setattr("autograder.grading.preflight_key.fingerprint",
                        lambda exercise, backend, sanitize: ("k" * 64, {}))
    calls = []

    def ask(threads, env):
        calls.append(list(threads))
        return Answers("GPU", dict(HOPPER), {t: 2048 // t for t in threads})

    monkeypatch.setattr(driver_occupancy, "ask", ask)
    first = driver_occupancy.answers("occupancy", [96, 1024])
    assert driver_occupancy.answers("occupancy", [96, 1024]) == first  # this process
    monkeypatch.setattr(driver_occupancy, "_memo", {})
    assert driver_occupancy.answers("occupancy", [96, 1024]) == first  # the disk
    assert calls == [[96, 1024]]
    stored = list((tmp_path / "driver_answers").glob("*.json"))
    assert len(stored) == 1 and json.loads(stored[0].read_text())["blocks"] == {"96": 21,
                                                                                 "1024": 2}
    stored[0].write_text('{"limits": {}, "blocks": {}}')  # unusable: asked again
    monkeypatch.setattr(driver_occupancy, "_memo", {})
    assert driver_occupancy.answers("occupancy", [96, 1024]) == first
    assert calls == [[96, 1024], [96, 1024]]


@pytest.mark.parametrize("data", [
    None, [], {"limits": HOPPER}, {"limits": HOPPER, "blocks": {"96": -1}},
    {"limits": {**HOPPER, "max_blocks_per_sm": True}, "blocks": {"96": 21}},
    {"limits": HOPPER, "blocks": {"96": 2.5}},
])
def test_an_answer_that_does_not_fit_is_refused(data):
    with pytest.raises((ValueError, KeyError, TypeError)):
        Answers.from_json(data, [96])


@pytest.mark.skipif(gpu_available(), reason="with a GPU the query succeeds")
def test_a_driver_that_cannot_be_asked_is_the_grader_s_setup():
    from autograder.sandbox.limits import child_env

    with pytest.raises(GraderSetupError, match="occupancy calculator could not be asked"):
        driver_occupancy.ask([96], child_env("gpu"))


@pytest.mark.gpu
@needs_gpu()
def test_on_a_gpu_the_trusted_query_gives_this_gpu_s_limits_and_answers():
    from autograder.sandbox.limits import child_env

    got = driver_occupancy.ask([96, 1024], child_env("gpu"))
    assert set(got.limits) == set(HOPPER) and all(v > 0 for v in got.limits.values())
    solution = _solution()
    for t, blocks in got.blocks.items():  # a small kernel: registers do not bind
        assert blocks == solution.resident_blocks_per_sm(t, 0, *got.limits.values())
