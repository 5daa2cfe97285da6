"""Exports and console tables say when a score is provisional ("provisional: N points need a
GPU"), also for results stored before ``pending_points`` existed. No grading runs here."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

from autograder.cli import app
from autograder.report import console as console_report
from autograder.report import export
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.batch.store import ResultStore


def _result(skip_timing: bool = True, submission: str = "alice.py") -> ExerciseResult:
    """60 / 100 on the simulator: timing (25) and one hidden size (15) skipped."""
    skipped = Status.SKIPPED if skip_timing else Status.PASSED
    return ExerciseResult("tiled_matmul", submission, "sim" if skip_timing else "gpu:H200", tests=[
        TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                   status=Status.PASSED, points=30, max_points=30, message="correct"),
        TestResult(name="hidden: width 17", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=Status.FAILED, points=0, max_points=15,
                   message="289 of 289 elements wrong"),
        TestResult(name="hidden: width 1024", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=skipped, points=0 if skip_timing else 15, max_points=15,
                   message="runs on a GPU only"),
        TestResult(name="concept: shared memory", kind=Kind.CONCEPT, visibility="hidden",
                   status=Status.ERROR, points=0, max_points=15, message="boom"),
        TestResult(name="timing: against the instructor's kernel", kind=Kind.TIMING,
                   visibility="hidden", status=skipped, points=0 if skip_timing else 25,
                   max_points=25, message="timing needs a GPU"),
        TestResult(name="diagnostic: barriers", kind=Kind.DIAGNOSTIC, visibility="hidden",
                   status=Status.PASSED, points=0, max_points=0, message="none"),
    ], seed=987654321, phases_s={"total": 12.6})


def _row(result: dict, student: str = "alice") -> dict:
    return {"key": f"{student}/01_tiled_matmul", "student": student,
            "exercise": result["exercise"], "submission": result["submission"],
            "score": result["score"], "max_score": result["max_score"],
            "provisional": int(result["provisional"]), "device": result["device"],
            "result": result}


def _old(result: dict) -> dict:
    """A result as stored before ``pending_points`` was added."""
    return {k: v for k, v in result.items() if k != "pending_points"}


@pytest.fixture
def rows() -> list[dict]:
    return [_row(_result().to_dict(), "alice"), _row(_old(_result().to_dict()), "bob"),
            _row(_result(skip_timing=False).to_dict(), "carol")]


def test_pending_points_of_older_rows_come_from_skipped_tests():
    new, old = _result().to_dict(), _old(_result().to_dict())
    assert export.pending_points(new) == 40
    assert export.pending_points(old) == 40
    assert export.note(old) == "provisional: 40 points need a GPU"
    assert export.note(_result(skip_timing=False).to_dict()) == ""


def test_a_test_result_takes_keywords_only_and_reads_back_what_it_wrote():
    """Eight fields of which two are floats and several strings: a positional call could swap
    ``points`` and ``max_points`` unseen, so it is refused (issue 23)."""
    with pytest.raises(TypeError):
        TestResult("x", Kind.TIMING, "hidden", Status.PASSED, 1.0, 1.0)
    tests = _result().tests
    tests[0].details = {"wrong_masks": []}
    assert [TestResult.from_dict(t.to_dict()) for t in tests] == tests
    assert "details" not in tests[1].to_dict()


def test_csv_keeps_its_columns_and_adds_pending_points_and_note(rows):
    table = list(csv.reader(io.StringIO(export.to_csv(rows))))
    assert table[0][:7] == ["student", "exercise", "score", "max_score", "provisional",
                            "device", "key"]
    assert table[0][7:] == ["pending_points", "note"]
    by = {r[0]: dict(zip(table[0], r)) for r in table[1:]}
    for student in ("alice", "bob"):
        assert float(by[student]["score"]) == 30 and by[student]["provisional"] == "True"
        assert by[student]["pending_points"] == "40"
        assert by[student]["note"] == "provisional: 40 points need a GPU"
    assert by["carol"]["provisional"] == "False"
    assert by["carol"]["pending_points"] == "0" and by["carol"]["note"] == ""


def test_json_export_carries_the_note(rows):
    out = {r["student"]: r for r in json.loads(export.to_json(rows))}
    assert out["bob"]["pending_points"] == 40
    assert out["bob"]["provisional_note"] == "provisional: 40 points need a GPU"
    assert out["carol"]["provisional_note"] == ""
    assert out["alice"]["tests"][0]["name"] == "public: width 16"  # the result is all there


def test_gradescope_export_follows_the_spec_and_never_fails_a_skipped_test():
    gs = export.to_gradescope(_old(_result().to_dict()))
    assert gs["score"] == 30
    assert isinstance(gs["execution_time"], int) and gs["execution_time"] == 13
    assert "provisional: 40 points need a GPU" in gs["output"]
    assert "timing: against the instructor's kernel (25 points)" in gs["output"]
    names = [t["name"] for t in gs["tests"]]
    assert "timing: against the instructor's kernel" not in names
    assert "hidden: width 1024" not in names
    assert {t["status"] for t in gs["tests"]} <= {"passed", "failed"}
    by = {t["name"]: t for t in gs["tests"]}
    assert by["concept: shared memory"]["status"] == "failed"  # error: lost points
    assert by["hidden test 1"]["visibility"] == "after_published"
    assert by["hidden test 1"]["output"] == "wrong result"  # not "289 of 289 elements wrong"
    text = json.dumps(gs)
    assert "width 17" not in text and "width 1024" not in text and "289" not in text
    assert by["public: width 16"]["visibility"] == "visible"
    for t in gs["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "visibility"}
    assert gs["extra_data"]["pending_points"] == 40
    assert gs["extra_data"]["skipped"] == ["hidden test 2",
                                           "timing: against the instructor's kernel"]
    assert "987654321" not in gs["output"]  # the secret seed: for instructors only
    assert gs["extra_data"]["seed"] == 987654321
    final = export.to_gradescope(_result(skip_timing=False).to_dict(), execution_time=3.4)
    assert "provisional" not in final["output"] and final["execution_time"] == 3
    assert len(final["tests"]) == 6


def test_grader_failure_has_no_score():
    gs = export.gradescope_grader_failure("no GPU is visible", 2.2)
    assert "score" not in gs and all("score" not in t for t in gs["tests"])
    assert "not your score" in gs["output"] and "no GPU is visible" in gs["output"]
    assert gs["extra_data"]["grader_failed"] is True


def _text(renderable) -> str:
    con = Console(width=200, record=True, file=io.StringIO())
    con.print(renderable)
    return con.export_text()


def test_console_says_how_many_points_need_a_gpu(rows):
    assert "30 / 100 (provisional: 40 points need a GPU)" in _text(
        console_report.result_table(_result()))
    assert "provisional" not in _text(console_report.result_table(_result(skip_timing=False)))
    text = _text(console_report.class_table(
        [dict(r, summary=console_report.summary(r["result"])) for r in rows]))
    assert text.count("provisional: 40 points need a GPU") == 2  # alice and bob (older row)
    carol = next(ln for ln in text.splitlines() if "carol" in ln)
    assert "provisional" not in carol


def test_cli_export_of_a_stored_batch(tmp_path):
    db = tmp_path / "results.sqlite"
    store = ResultStore(db)
    store.save("alice/01_tiled_matmul", "alice", _result().to_dict())
    store.save("bob/01_tiled_matmul", "bob", _old(_result().to_dict()))
    store.close()
    runner = CliRunner()
    out = runner.invoke(app, ["export", "--db", str(db), "--format", "csv"])
    assert out.exit_code == 0, out.output
    assert out.output.count("provisional: 40 points need a GPU") == 2
    gs_dir = tmp_path / "gs"
    out = runner.invoke(app, ["export", "--db", str(db), "--format", "gradescope",
                              "--out", str(gs_dir)])
    assert out.exit_code == 0, out.output
    bob = json.loads((gs_dir / "bob" / "01_tiled_matmul" / "results.json").read_text())
    assert "provisional: 40 points need a GPU" in bob["output"]
    assert {t["status"] for t in bob["tests"]} <= {"passed", "failed"}
