"""The grader reads a notebook by its code (issue 32, item 12)."""

from __future__ import annotations

import json

import pytest


def test_a_notebooks_outputs_do_not_count_against_the_code_limit(tmp_path):
    """Issue 32, item 12: one embedded plot takes a notebook over the code limit; only code cells
    are graded, so it is read. Its code is still bounded, and so is the file."""
    from autograder.source import submission as sub

    def notebook(code: str, png: str = "") -> str:
        out = [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}}]
        return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": code,
                                      "outputs": out if png else []}], "nbformat": 4})

    big = tmp_path / "plot.ipynb"
    big.write_text(notebook("x = 1\n", "A" * (sub.MAX_SUBMISSION_BYTES + 1)))
    assert sub.load_source(big).text.strip() == "x = 1"
    code = tmp_path / "code.ipynb"
    code.write_text(notebook("# " + "x" * sub.MAX_SUBMISSION_BYTES + "\n"))
    with pytest.raises(sub.SubmissionError, match="code cells of .* hold over 8 MiB of code"):
        sub.load_source(code)
    values = tmp_path / "values.ipynb"
    values.write_text(notebook("x = 1\n", "A" * sub.MAX_SUBMISSION_BYTES)[:-1]
                      + ', "x": [' + "[]," * sub.MAX_NOTEBOOK_VALUES + "[]]}")
    with pytest.raises(sub.SubmissionError, match="values, more than the grader reads"):
        sub.load_source(values)
    py = tmp_path / "big.py"
    py.write_text("# " + "x" * sub.MAX_SUBMISSION_BYTES + "\n")
    with pytest.raises(sub.SubmissionError, match="over 8 MiB"):
        sub.load_source(py)
