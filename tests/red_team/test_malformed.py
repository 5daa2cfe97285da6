"""Red team (issue 21): no input crashes the grader.

Generated broken notebooks (any JSON type anywhere: cells, metadata, nbgrader metadata, source,
outputs; truncated JSON), deep or huge expressions, binary and empty files each get a 0 and one
clear message, never a traceback and never "the grader's setup". The generated cases go through
the cheap path of a grading (:func:`autograder.grading.steps.grade_submission` up to the grading
children, which are replaced by a stub: reading the file, the parse check in its limited child);
whatever that path accepts must compile in the grader's own process. A few fixed files then go
through each front end: ``autograder grade``, ``autograder batch`` (stored as a 0, not retried
by a rerun), Gradescope's run and ``nbgrader autograde`` in a real course.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from unittest import mock

import nbformat
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from autograder import exercises
from autograder.grading import steps as grading
from autograder.sandbox import parse_check
from autograder.nbgrader.reader import read_any
from autograder.wire.results import Status

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = "tiled_matmul"
EX = exercises.get(EXERCISE)
CHEAP = settings(deadline=None, max_examples=150,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])
FORBIDDEN = ("Traceback", "setup", "Error:", "\n  File ")


def _cheap_grade(path: Path):
    """``(result, source)`` of the grading of ``path`` up to the grading children; ``source``
    is what would reach them (None when the submission was refused before)."""
    reached = {}

    def stub(graded, result):
        reached["source"] = graded.source
        result.tests = []
        return result

    with mock.patch.object(grading, "_grade_source", stub):
        result = grading.grade_submission(path, EX, "sim", 1, None, False)
    return result, reached.get("source")


def _assert_zero_with_one_message(result):
    assert result.score == 0 and result.max_score == EX.max_score
    assert {t.status for t in result.tests} == {Status.ERROR}
    first = result.tests[0].message
    assert first.strip() and len(first) < 600, first
    assert not any(word in first for word in FORBIDDEN), first
    for t in result.tests[1:]:
        assert t.message == first or (t.message.startswith("not run: ")
                                      and t.message.endswith("(see above)")), t.message


def _check(path: Path):
    result, source = _cheap_grade(path)
    event("refused" if source is None else "reaches the grading children")
    if source is None:
        _assert_zero_with_one_message(result)
    else:  # what the parse check accepts, the grader's process can compile
        compile(source.text, source.path, "exec")
        source.text.encode("utf-8")


# -- generated notebooks ------------------------------------------------------------------------

#: Stands for a number of 5000 digits (more than Python converts) in the JSON text.
BIG = "<a number of 5000 digits>"
CODE = st.sampled_from(["x = 1", "def f(:\n", "%%bash\nls", "!ls", "N = " + "+".join("1" * 150),
                        "\x00", "\ud800", "from numba import cuda\n", "1+"]) | st.text(max_size=30)
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.sampled_from([BIG, "\ud800", "code"]) | CODE)
ANY = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                   | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)


def maybe(strategy):
    """``strategy``, or any JSON value in its place."""
    return st.one_of(strategy, strategy, ANY)


NBGRADER = maybe(st.fixed_dictionaries({}, optional={"grade": ANY, "solution": ANY,
                                                     "grade_id": ANY, "points": ANY}))
METADATA = maybe(st.fixed_dictionaries({}, optional={"nbgrader": NBGRADER}))
CELL = maybe(st.fixed_dictionaries(
    {"cell_type": maybe(st.sampled_from(["code", "markdown", "raw"])), "metadata": METADATA,
     "source": maybe(CODE | st.lists(CODE, max_size=3))},
    optional={"outputs": ANY, "execution_count": ANY}))
NOTEBOOK = maybe(st.fixed_dictionaries({"cells": maybe(st.lists(CELL, max_size=4))},
                                       optional={"metadata": ANY, "nbformat": maybe(st.just(4)),
                                                 "nbformat_minor": ANY}))


def _json_bytes(nb, cut: int | None) -> bytes:
    text = json.dumps(nb, allow_nan=True).replace(json.dumps(BIG), "9" * 5000)
    return text[:cut].encode("utf-8") if cut is not None else text.encode("utf-8")


@CHEAP
@given(nb=NOTEBOOK, cut=st.none() | st.integers(0, 200))
@example(nb={"cells": [{"cell_type": "code", "metadata": [], "source": "x = 1"}]}, cut=None)
@example(nb={"cells": [{"cell_type": "code", "metadata": {}, "source": [1, 2]}]}, cut=None)
@example(nb={"cells": [{"cell_type": "code", "metadata": {"nbgrader": "yes"},
                        "source": "x = 1"}]}, cut=None)
@example(nb={"cells": [{"cell_type": "code", "source": "x = '\ud800'"}]}, cut=None)
@example(nb={"cells": [], "n": BIG}, cut=None)
def test_any_notebook_is_read_or_refused_with_one_message(tmp_path_factory, nb, cut):
    data = _json_bytes(nb, cut)
    path = tmp_path_factory.mktemp("nb") / "sub.ipynb"
    path.write_bytes(data)
    _check(path)
    stand_in = read_any(data)  # nbgrader's reading of the same file
    nbformat.writes(stand_in)
    from nbgrader import utils
    for cell in stand_in.cells:
        utils.is_grade(cell), utils.is_solution(cell), utils.is_locked(cell)


def test_a_notebook_nested_too_deeply_is_refused(tmp_path):
    path = tmp_path / "deep.ipynb"
    path.write_text("[" * 100_000 + "]" * 100_000)
    result, source = _cheap_grade(path)
    assert source is None
    _assert_zero_with_one_message(result)
    assert "nested too deeply" in result.tests[0].message
    assert read_any(path.read_bytes()).cells == []


# -- generated Python files ------------------------------------------------------------------


def _deep(shape: str, n: int) -> str:
    return {
        "chain": "N = " + "+".join(["1"] * n),
        "power": "N = " + "**".join(["1"] * n),
        "parens": "N = " + "(" * n + "1" + ")" * n,
        "unary": "N = " + "-" * n + "1",
        "not": "N = " + "not " * n + "1",
        "lists": "N = " + "[" * n + "]" * n,
        "calls": "N = " + "f(" * n + ")" * n,
        "lambdas": "N = " + "lambda: " * n + "1",
        "ifs": "".join(" " * i + "if x:\n" for i in range(min(n, 1500))) + " " * min(n, 1500)
        + "pass",
        "subscripts": "N = x" + "[0]" * n,
        "attributes": "N = x" + ".a" * n,
        "strings": "N = " + " ".join(['"a"'] * n),
    }[shape] + "\n"


SHAPES = ["chain", "power", "parens", "unary", "not", "lists", "calls", "lambdas", "ifs",
          "subscripts", "attributes", "strings"]


@settings(CHEAP, max_examples=60)
@given(shape=st.sampled_from(SHAPES),
       n=st.integers(1, 3000) | st.sampled_from([98, 99, 100, 101, 199, 200, 201, 100_000]))
@example(shape="chain", n=100_000)
def test_deep_or_long_code_is_graded_or_refused_with_one_message(tmp_path_factory, shape, n):
    path = tmp_path_factory.mktemp("deep") / "sub.py"
    path.write_text(_deep(shape, n), encoding="utf-8")
    _check(path)


@settings(CHEAP, max_examples=60)
@given(data=st.binary(max_size=300)
       | st.text(alphabet=st.sampled_from("\x00\ufeff\r\n\t\x0c \\x=1(#:'\""), max_size=60)
       .map(lambda s: s.encode("utf-8")))
@example(data=b"")
@example(data=b"   \n\n")
@example(data=bytes(range(256)))
@example(data=b"x = 1\x00\n")
def test_binary_and_empty_files_are_refused_with_one_message(tmp_path_factory, data):
    for suffix in (".py", ".ipynb"):
        path = tmp_path_factory.mktemp("bin") / f"sub{suffix}"
        path.write_bytes(data)
        _check(path)


def test_a_file_too_large_is_refused_before_any_child(tmp_path):
    path = tmp_path / "big.py"
    path.write_text("x = 1\n" * (parse_check.MAX_CHARS // 6 + 1))
    result, source = _cheap_grade(path)
    assert source is None
    _assert_zero_with_one_message(result)
    assert "too large" in result.tests[0].message


def test_the_parse_check_child_is_limited_and_its_failures_are_messages(tmp_path):
    from autograder.source.submission import Source

    with mock.patch.object(parse_check, "CPU_S", 1), \
            mock.patch.object(parse_check, "MAX_CHARS", 10 ** 9):
        slow = parse_check.check(Source("x = [" + "1," * 900_000 + "]\n", "slow.py"))
    assert slow is not None and "too long to compile" in slow.message
    with mock.patch.object(parse_check, "MEMORY_BYTES", 64 << 20):
        big = parse_check.check(Source("x = [" + "1," * 300_000 + "]\n", "big.py"))
    assert big is not None and ("could not be compiled" in big.message
                                or "too large" in big.message), big


# -- fixed files through each front end ------------------------------------------------------

FIXED = {
    "chain.py": ("N = " + "+".join(["1"] * 100_000) + "\n").encode(),
    "binary.py": bytes(range(256)),
    "empty.py": b"",
    "cells.ipynb": json.dumps({"cells": [
        {"cell_type": "code", "metadata": [], "source": "x = 1"},
        {"cell_type": "code", "metadata": {"nbgrader": "yes"}, "source": "y = 2"},
        {"cell_type": "code", "metadata": {}, "source": [1, 2]}]}).encode(),
    "deep.ipynb": b"[" * 100_000 + b"]" * 100_000,
}
WORDS = {"chain.py": "nested too deeply", "binary.py": "not UTF-8", "empty.py": "empty",
         "cells.ipynb": "holding a number", "deep.ipynb": "nested too deeply"}


@pytest.fixture(scope="module")
def fixed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fixed")
    for name, data in FIXED.items():
        (folder / name).write_bytes(data)
    return folder


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("name", ["chain.py", "binary.py", "cells.ipynb"])
def test_cli_grade_exits_0_with_a_0_and_the_message(fixed, name):
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(fixed / name),
                           "-e", EXERCISE, "--device", "sim", "--json"], capture_output=True,
                          text=True, cwd=ROOT, env=_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    got = json.loads(proc.stdout)
    assert got["score"] == 0
    assert WORDS[name] in got["tests"][0]["message"]


def test_batch_stores_each_as_a_0_and_a_rerun_retries_nothing(fixed, tmp_path):
    folder = tmp_path / "class"
    shutil.copytree(fixed, folder)
    db = tmp_path / "class.sqlite"
    cmd = [sys.executable, "-m", "autograder.cli", "batch", str(folder), "--exercise", EXERCISE,
           "--device", "sim", "--db", str(db), "--workers", "1"]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env(),
                           timeout=600)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "grader error" not in first.stdout + first.stderr
    with sqlite3.connect(db) as con:
        stored = {key: json.loads(text) for key, text in
                  con.execute("SELECT key, result_json FROM results")}
    assert len(stored) == len(FIXED), sorted(stored)
    for key, res in stored.items():
        name = next(n for n in FIXED if key.startswith(Path(n).stem + "/"))
        assert sum(t["points"] for t in res["tests"]) == 0
        assert WORDS[name] in res["tests"][0]["message"], res["tests"][0]["message"]
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env(),
                           timeout=600)
    assert again.returncode == 0 and "grader error" not in again.stdout + again.stderr


@pytest.mark.parametrize("name", ["chain.py", "cells.ipynb", "deep.ipynb"])
def test_gradescope_run_scores_0_with_the_message(fixed, tmp_path, name):
    from autograder.gradescope import run as gs_run

    (tmp_path / "submission").mkdir()
    shutil.copy(fixed / name, tmp_path / "submission" / name)
    assert gs_run.run(tmp_path, EXERCISE, "sim") == 0
    got = json.loads((tmp_path / "results" / "results.json").read_text())
    assert got["score"] == 0
    text = json.dumps(got)
    assert WORDS[name] in text and "setup" not in text and "Traceback" not in text


@pytest.mark.slow
def test_nbgrader_autograde_scores_malformed_notebooks_0_and_stores_them(tmp_path):
    from course.nbhelpers import ASSIGNMENTS, TEST_DEVICE, make_course, nbgrader, scores

    if TEST_DEVICE != "sim":
        pytest.skip("the course of this test grades on the simulator")
    course = make_course(tmp_path / "course")
    assignment = "01_tiled_matmul"
    nb_name = ASSIGNMENTS[assignment][1]
    release = json.loads((course / "release" / assignment / nb_name).read_text())
    for student in ("source_int", "cells_text"):
        nb = json.loads(json.dumps(release))
        if student == "source_int":
            next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")
                 )["source"] = [1, 2]
        else:
            nb["cells"] = "x"
        dest = course / "submitted" / student / assignment / nb_name
        dest.parent.mkdir(parents=True)
        dest.write_text(json.dumps(nb))
    dest = course / "submitted" / "not_utf8" / assignment / nb_name
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"\xff\xfe{")
    nbgrader(course, "autograde", assignment, "--log-level=WARN")
    for student, words in (("source_int", "holding a number"), ("cells_text", "no list of cells"),
                           ("not_utf8", "not UTF-8")):
        got = scores(course, assignment, student)
        assert got and all(not p for p, _ in got.values()), got
        nb = nbformat.read(course / "autograded" / student / assignment / nb_name, 4)
        from course.nbhelpers import output_text

        shown = "".join(output_text(o) for c in nb.cells if c.cell_type == "code"
                        for o in c.outputs
                        if o.get("name") == "stdout" or o.get("output_type") == "display_data")
        assert words in shown and "kernelgrade-nbgrader-" not in shown, shown[:500]


def test_a_student_cannot_choose_the_bytes_nbgrader_grades():
    """Only nbgrader's second pass trusts a stand-in's kept bytes: the sanitizing pass drops
    them from a well-formed notebook, so a student who writes them in gets their notebook
    graded, not the bytes."""
    import base64

    from autograder.nbgrader.reader import SUBMITTED_KEY, submitted_bytes

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nb.metadata[SUBMITTED_KEY] = base64.b64encode(b"other code").decode()
    data = nbformat.writes(nb).encode()
    assert submitted_bytes(read_any(data)) is None
    assert submitted_bytes(read_any(b'{"cells": 3}')) == b'{"cells": 3}'


def test_a_parse_check_that_cannot_run_is_the_graders_fault_not_a_zero():
    from autograder.errors import GraderSetupError
    from autograder.source.submission import Source

    with mock.patch.object(sys, "executable", "/bin/false"), \
            pytest.raises(GraderSetupError, match="fails even on `pass`"):
        parse_check.check(Source("x = 1\n", "ok.py"))
