"""Issue 32, items 11 and 12, as a student meets them on Gradescope: the bundle built by the CLI
from this tree, prepared once as ``setup.sh`` does, then a submission per test through
``run_autograder`` (the image of :mod:`tests.red_team.test_gradescope`).

- 11: the ``.py`` file that holds the work, uploaded beside an empty notebook, is graded, and the
  student's output names the notebook that was not; never a silent 0.
- 12: a notebook over 8 MiB because of one embedded plot is graded: only its code cells count
  against the grader's limit on code."""

from __future__ import annotations

import base64
import json
import random

import pytest

from tests.red_team.test_gradescope import (  # noqa: F401 (fixtures)
    EXERCISE, SOLUTION, bundle, container, image, python, run_autograder)
from autograder.source.submission import MAX_SUBMISSION_BYTES

pytestmark = pytest.mark.skipif(__import__("shutil").which("bwrap") is None,
                                reason="needs bubblewrap (apt-get install bubblewrap)")


def _notebook(code: str, outputs: list | None = None) -> str:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": code,
            "outputs": outputs or []}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _full_marks(results: dict) -> bool:
    return bool(results["tests"]) and all(t["score"] == t["max_score"] for t in results["tests"])


def test_a_py_beside_an_empty_notebook_is_graded_and_the_notebook_named(image, python):
    root = container(image, {"solution.py": SOLUTION.read_text(), "notes.ipynb": _notebook("")})
    proc, results, _ = run_autograder(root, python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _full_marks(results) and results["score"] > 0
    lines = results["output"].splitlines()
    files = next(ln for ln in lines if "Not graded" in ln)
    assert files.startswith("Graded solution.py.") and "notes.ipynb (it holds no code)" in files
    assert lines.index(files) == 1  # under the score's own line, before the notes


def test_a_notebook_with_a_big_plot_is_graded_by_its_code(image, python):
    png = base64.b64encode(random.Random(0).randbytes(7 * 2**20)).decode()
    plot = [{"output_type": "display_data", "metadata": {},
             "data": {"image/png": png, "text/plain": "<Figure size 640x480>"}}]
    text = _notebook(SOLUTION.read_text(), plot)
    assert len(text.encode()) > MAX_SUBMISSION_BYTES
    root = container(image, {f"{EXERCISE}.ipynb": text})
    proc, results, _ = run_autograder(root, python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _full_marks(results), results["output"]
