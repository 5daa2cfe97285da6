"""One secret seed per class and exercise (issue 22): every student of a batch faces the same
hidden inputs, so the same file gets the same grade; one seed per student only when asked
for, and a resumed batch keeps the rule it started with."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys

import pytest

from autograder.batch.store import ResultStore
from conftest import ROOT, SOLUTIONS


def test_the_rule_is_stored_with_the_seed_and_kept_on_resume(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    assert store.seed_per_student() is False  # the default: one seed per exercise
    assert store.seed_per_student(None) is False
    with pytest.raises(ValueError, match="one secret seed per exercise"):
        store.seed_per_student(True)
    other = ResultStore(tmp_path / "s.sqlite")
    assert other.seed_per_student(True) is True
    assert other.seed_per_student() is True


def test_seeds_are_shared_by_an_exercise_and_differ_between_exercises_and_students():
    seed = 1234
    assert ResultStore.exercise_seed(seed, "occupancy") == ResultStore.exercise_seed(seed,
                                                                                     "occupancy")
    assert ResultStore.exercise_seed(seed, "occupancy") != ResultStore.exercise_seed(seed,
                                                                                     "block_sum")
    assert ResultStore.exercise_seed(seed, "occupancy") != ResultStore.exercise_seed(seed + 1,
                                                                                     "occupancy")
    assert ResultStore.submission_seed(seed, "ann/occupancy") != \
        ResultStore.submission_seed(seed, "ben/occupancy")


def _batch(folder, db, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "batch", str(folder),
                           "--exercise", "occupancy", "--device", "sim", "--db", str(db),
                           "--workers", "1", *extra], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def _seeds(db) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        return {key: json.loads(text)["seed"]
                for key, text in con.execute("SELECT key, result_json FROM results")}


def test_a_class_faces_the_same_hidden_inputs_unless_asked_otherwise(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for student in ("ann", "ben"):
        shutil.copy(SOLUTIONS / "occupancy.py", folder / f"{student}.py")
    out = _batch(folder, tmp_path / "class.sqlite", "--seed", "77")
    assert out.returncode == 0, out.stderr[-2000:]
    seeds = _seeds(tmp_path / "class.sqlite")
    assert set(seeds) == {"ann/occupancy", "ben/occupancy"}
    assert set(seeds.values()) == {ResultStore.exercise_seed(77, "occupancy")}
    # a resumed batch may not change the rule: nothing is graded, exit 2
    again = _batch(folder, tmp_path / "class.sqlite", "--seed-per-student")
    assert again.returncode == 2 and "one secret seed per exercise" in again.stderr
    out = _batch(folder, tmp_path / "each.sqlite", "--seed", "77", "--seed-per-student")
    assert out.returncode == 0, out.stderr[-2000:]
    seeds = _seeds(tmp_path / "each.sqlite")
    assert seeds == {key: ResultStore.submission_seed(77, key) for key in seeds}
    assert len(set(seeds.values())) == 2
