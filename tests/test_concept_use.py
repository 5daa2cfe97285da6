"""Kernels that show the concept's parts without using them lose the concept points on the test
device, and keep every correctness point; honest kernels written otherwise than the
instructor's (``files/concept_honest/``) keep every point but timing's. Graded in this process
with the suite's seed (``conftest.graded_once``: a known-bad submission that ``test_exercises``
grades too is graded once); ``autograder grade --json`` is the same grading
(``test_json_of_grade``).

Each file in ``files/concept/`` is right and names its exercise (``# concept-exercise: NAME``),
its verdicts (``# kernelgrade-expect: ...``, :mod:`autograder.exercises.known_bad`) and what the concept
test's message must say (``# concept-message: TEXT``, optional) in its first lines. A known-bad
submission in an exercise's ``mutants/`` with a ``# concept-message:`` line is one of them too
(an exercise added by its folder alone keeps its variants there)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import exercises
from autograder.exercises import known_bad
from autograder.wire.results import ExerciseResult
from conftest import FILES, SEED, TEST_DEVICE, env_with_root, graded_once

def header(path: Path, key: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in path.read_text().splitlines()
            if line.startswith(f"# concept-{key}:")]


def _exercise_of(path: Path) -> str:
    (name,) = header(path, "exercise")
    return name


CASES = sorted([(_exercise_of(p), p) for p in (FILES / "concept").glob("*.py")]
               + [(name, p) for name in exercises.names() for p in exercises.mutants(name)
                  if header(p, "message")])
HONEST = sorted((_exercise_of(p), p) for p in (FILES / "concept_honest").glob("*.py"))


def test_every_exercise_with_a_use_bound_has_variants_that_fail_it():
    used = {n for n in exercises.names()
            if exercises.get(n).concept and exercises.get(n).concept.use}
    assert len(CASES) >= 11
    assert {name for name, _ in CASES} == used


def grade_json(exercise: str, path: Path) -> dict:
    return graded_once(path, exercise).to_dict()


def test_json_of_grade_is_the_grading_here():
    """``autograder grade --json`` in a process of its own gives the tests graded here."""
    exercise, path = next((e, p) for e, p in CASES if p.parent.name == "concept")
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path),
                           "-e", exercise, "--device", TEST_DEVICE, "--json",
                           "--seed", str(SEED)],
                          capture_output=True, text=True, timeout=300,
                          env=env_with_root())
    shown = json.loads(done.stdout)
    here = grade_json(exercise, path)

    def verdicts(data):
        return [(t["name"], t["status"], t["points"]) for t in data["tests"]]

    assert done.returncode == 0, done.stderr[-2000:]
    assert verdicts(shown) == verdicts(here)
    assert any(t["kind"] == "concept" and t["points"] == 0 for t in shown["tests"])


@pytest.mark.parametrize("exercise, path", CASES, ids=[p.stem for _, p in CASES])
def test_presence_without_use_loses_the_concept_points(exercise, path):
    data = grade_json(exercise, path)
    result = ExerciseResult.from_dict(data)
    assert not known_bad.unmet(path, result), [t["message"] for t in data["tests"]]
    concept = [t for t in data["tests"] if t["kind"] == "concept"]
    assert len(concept) == 1 and concept[0]["points"] == 0
    assert "your" in concept[0]["message"]
    for text in header(path, "message"):
        assert text in concept[0]["message"]
    correctness = [t for t in data["tests"] if t["kind"] == "correctness"]
    assert all(t["status"] in ("passed", "skipped") for t in correctness), \
        "the variant must be right: only the concept is at stake"


@pytest.mark.parametrize("exercise, path", HONEST, ids=[p.stem for _, p in HONEST])
def test_an_honest_kernel_written_otherwise_keeps_every_point_but_speed(exercise, path):
    """Every correctness, concept and diagnostic point. Not timing: these kernels are written
    to try the concept test, not to be fast (on an H200, 2026-11-26, matmul_guarded_loads'
    inner loop cut at the matrix's edge, a trip count known only at run time, ran 3.39 times
    the instructor's time; with ``range(TILE_WIDTH)`` 1.40 times)."""
    data = grade_json(exercise, path)
    wrong = [f"{t['name']}: {t['status']} {t['message'][:300]}" for t in data["tests"]
             if t["kind"] != "timing" and t["status"] not in ("passed", "skipped")]
    assert not wrong, wrong
    assert any(t["kind"] == "concept" and t["status"] == "passed" for t in data["tests"])
