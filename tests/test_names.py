"""Issue 30, goal 9: exports are safe to open, and a student is one student however their name is
encoded.

* Every CSV the grader writes (``autograder export --format csv``, nbgrader's ``grades.csv``
  through our export plugin) holds no cell a spreadsheet would evaluate: a cell whose text starts
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (also after spaces, or in a full-width
  form) starts with a single quote, and text is quoted; scores stay numbers.
* Student names are NFC-normalised where a class folder is read: two files or folders whose
  names normalise alike are one student's two submissions, listed with the reason and graded
  neither (as for ``alice.py`` beside ``alice.ipynb``); nbgrader's gradebook, which keeps them as
  two students, exports neither score.

One small simulator batch (files that do not parse: graded in moments) drives ``autograder
batch`` and ``autograder export`` as an instructor would.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograder.batch.discovery import discover
from autograder.cli import app
from autograder.report import export
from conftest import TEST_DEVICE

BROKEN = "def broken(:\n"
NFC_JOSE = unicodedata.normalize("NFC", "jos\u00e9")       # é: one code point
NFD_JOSE = unicodedata.normalize("NFD", "jos\u00e9")       # e + U+0301 combining acute
assert NFC_JOSE != NFD_JOSE and NFC_JOSE == unicodedata.normalize("NFC", NFD_JOSE)

#: Names a spreadsheet would take as a formula, each with the way it starts.
FORMULAS = ["=HYPERLINK(\"x\",\"y\")", "+1+cmd|' -C calc'!A0", "-2+3", "@SUM(A1:A9)",
            "\t=1+1", "\r=1+1", " =1+1", "\uff1d1+1"]


def _dangerous(cell: str) -> bool:
    """Would a spreadsheet evaluate this cell's text (OWASP's list, after spaces, NFKC)?"""
    first = cell.lstrip(" \u00a0\u3000")[:1]
    return cell[:1] in "=+-@\t\r\n" and cell != "" or (
        first != "" and unicodedata.normalize("NFKC", first) in "=+-@")


# --- the cell ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_cell_becomes_text_that_shows_what_was_written(text):
    cell = export.safe_cell(text)
    assert cell == "'" + text and not _dangerous(cell)


@pytest.mark.parametrize("text", ["alice", NFC_JOSE, "O'Brien", "1e5", "", "a=b", "a-b",
                                  "not graded: /x/=y.py: a symbolic link"])
def test_plain_text_is_left_as_it_is(text):
    assert export.safe_cell(text) == text


def test_numbers_stay_numbers_and_text_is_quoted():
    text = export.write_csv([["-2+3", -2.5, 40.0, 7, True, None, "a,\t=b"]])
    assert text == '"\'-2+3",-2.5,40,7,"True","","a,\t=b"\r\n'
    [row] = csv.reader(io.StringIO(text, newline=""), quoting=csv.QUOTE_NONNUMERIC)
    assert row[1:4] == [-2.5, 40.0, 7.0]  # unquoted: a spreadsheet's numbers


# --- discovery -----------------------------------------------------------------------------


def test_two_spellings_of_one_name_in_a_flat_folder_are_listed_not_graded(tmp_path):
    (tmp_path / f"{NFC_JOSE}.py").write_text(BROKEN)
    (tmp_path / f"{NFD_JOSE}.py").write_text(BROKEN)
    (tmp_path / "bob.py").write_text(BROKEN)
    if len(os.listdir(tmp_path)) != 3:
        pytest.skip("this file system normalises names itself (one josé.py)")
    found = discover(tmp_path, "occupancy")
    assert [s.student for s in found.submissions] == ["bob"]
    dup = [s for s in found.skipped if s.kind == "duplicate"]
    assert sorted(Path(s.path).name for s in dup) == sorted([f"{NFC_JOSE}.py", f"{NFD_JOSE}.py"])
    for s in dup:
        assert s.student == NFC_JOSE and s.key == f"{NFC_JOSE}/occupancy"
        assert "two Unicode forms" in s.reason and "none of them is graded" in s.reason
        assert ascii(f"{NFC_JOSE}.py") in s.reason and ascii(f"{NFD_JOSE}.py") in s.reason


def test_one_decomposed_name_is_graded_under_its_composed_form(tmp_path):
    (tmp_path / f"{NFD_JOSE}.py").write_text(BROKEN)
    [sub] = discover(tmp_path, "occupancy").submissions
    assert sub.student == NFC_JOSE and sub.key == f"{NFC_JOSE}/occupancy"
    assert sub.path.name == f"{NFD_JOSE}.py"  # the file as it is on disk, to be read


def test_two_spellings_of_one_student_folder_in_nbgrader_s_layout(tmp_path):
    for name in (NFC_JOSE, NFD_JOSE):
        (tmp_path / name / "01_occupancy").mkdir(parents=True)
        (tmp_path / name / "01_occupancy" / "occupancy.py").write_text(BROKEN)
    (tmp_path / NFD_JOSE / "01_tiled_matmul").mkdir()
    (tmp_path / NFD_JOSE / "01_tiled_matmul" / "tiled_matmul.py").write_text(BROKEN)
    found = discover(tmp_path)
    # the other exercise is one submission of the same (composed) student
    assert [(s.student, s.key) for s in found.submissions] == [
        (NFC_JOSE, f"{NFC_JOSE}/01_tiled_matmul")]
    dup = [s for s in found.skipped if s.kind == "duplicate"]
    assert len(dup) == 2 and {s.key for s in dup} == {f"{NFC_JOSE}/01_occupancy"}
    assert {Path(s.path).parts[-3] for s in dup} == {NFC_JOSE, NFD_JOSE}
    assert all("two Unicode forms" in s.reason for s in dup)


# --- autograder batch, then export, as an instructor runs them ------------------------------


@pytest.fixture(scope="module")
def class_export(tmp_path_factory):
    """A flat class on the test device: josé.py twice (NFC and NFD), students whose names are
    formulas, and bob; graded by ``autograder batch`` and exported as CSV and JSON."""
    tmp = tmp_path_factory.mktemp("names")
    root = tmp / "class"
    root.mkdir()
    names = [NFC_JOSE, NFD_JOSE, "bob"] + [n for n in FORMULAS if "\r" not in n]
    for name in names:
        (root / f"{name}.py").write_text(BROKEN)
    if len(os.listdir(root)) != len(names):
        pytest.skip("this file system normalises names itself")
    db = tmp / "r.sqlite"
    runner = CliRunner()
    res = runner.invoke(app, ["batch", str(root), "--db", str(db), "-e", "occupancy",
                              "--device", TEST_DEVICE, "--workers", "1"])
    assert res.exit_code == 0, res.output
    out = {}
    for fmt in ("csv", "json"):
        res = runner.invoke(app, ["export", "--db", str(db), "--format", fmt,
                                  "--out", str(tmp / f"grades.{fmt}")])
        assert res.exit_code == 0, res.output
        out[fmt] = (tmp / f"grades.{fmt}").read_text(encoding="utf-8")
    return root, names, out


def test_no_cell_of_the_csv_export_is_a_formula(class_export):
    root, names, out = class_export
    table = list(csv.reader(io.StringIO(out["csv"], newline="")))
    assert table[0] == export.CSV_COLUMNS
    assert [c for row in table for c in row if _dangerous(c)] == []
    graded = {r[0]: dict(zip(table[0], r)) for r in table[1:] if r[2] != ""}
    for name in FORMULAS:
        if "\r" not in name:
            assert graded["'" + name]["score"] == "0", name  # the name, readable, and its 0
            assert graded["'" + name]["key"] == f"'{name}/occupancy"


def test_scores_are_numbers_and_names_are_quoted_text(class_export):
    _, _, out = class_export
    lines = out["csv"].splitlines()
    bob = next(ln for ln in lines if ln.startswith('"bob"'))
    assert bob.startswith('"bob","occupancy",0,100,"False",')


def test_josé_twice_is_listed_not_graded_in_every_export(class_export):
    root, _, out = class_export
    table = list(csv.DictReader(io.StringIO(out["csv"], newline="")))
    graded = [r["student"] for r in table if r["score"] != ""]
    assert NFC_JOSE not in graded and NFD_JOSE not in graded and "bob" in graded
    listed = [r for r in table if r["student"] == NFC_JOSE]
    assert len(listed) == 2 and all(r["score"] == "" for r in listed)
    assert all(r["note"].startswith("not graded: ") and "two Unicode forms" in r["note"]
               for r in listed)
    assert {r["note"].split(": ")[1] for r in listed} == {
        str(root / f"{NFC_JOSE}.py"), str(root / f"{NFD_JOSE}.py")}
    items = json.loads(out["json"])
    assert sorted(Path(i["path"]).name for i in items if not i["graded"]) == sorted(
        [f"{NFC_JOSE}.py", f"{NFD_JOSE}.py"])
    assert all(unicodedata.is_normalized("NFC", i["student"]) for i in items)


# --- nbgrader's grades.csv -----------------------------------------------------------------


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """An nbgrader gradebook with a formula for a student id, a name with a comma, and josé in
    both Unicode forms; every student submitted ``ps1``."""
    api = pytest.importorskip("nbgrader.api")
    with pytest.MonkeyPatch.context() as mp:  # nbgrader runs alembic from PATH
        mp.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                           os.environ.get("PATH", "")]))
        gb = api.Gradebook(f"sqlite:///{tmp_path_factory.mktemp('gb') / 'gradebook.db'}")
    gb.add_assignment("ps1")
    gb.add_student("=HYPERLINK(\"http://x\")", first_name="@me", last_name="Smith, Jr.",
                   email="-x@example.org")
    gb.add_student("alice", first_name="Alice", last_name="Liddell")
    for sid in (NFC_JOSE, NFD_JOSE):
        gb.add_student(sid, first_name="José", last_name="Arcadio")
    for s in gb.students:
        gb.add_submission("ps1", s.id)
    yield gb
    gb.close()


def _export(gradebook, tmp_path) -> str:
    from autograder.nbgrader.export import ExportGradesWithNotes

    dest = tmp_path / "grades.csv"
    ExportGradesWithNotes(to=str(dest)).export(gradebook)
    return dest.read_text(encoding="utf-8")


def test_nbgrader_s_grades_csv_has_no_formula_and_keeps_each_name_whole(gradebook, tmp_path):
    table = list(csv.DictReader(io.StringIO(_export(gradebook, tmp_path), newline="")))
    assert [c for r in table for c in r.values() if _dangerous(c)] == []
    row = next(r for r in table if "HYPERLINK" in r["student_id"])
    assert row["student_id"] == "'=HYPERLINK(\"http://x\")"
    assert (row["first_name"], row["last_name"], row["email"]) == (
        "'@me", "Smith, Jr.", "'-x@example.org")
    assert float(row["score"]) == 0.0 and row["max_score"] == "0"


def test_nbgrader_s_two_spellings_of_one_name_get_no_score(gradebook, tmp_path):
    table = list(csv.DictReader(io.StringIO(_export(gradebook, tmp_path), newline="")))
    twins = [r for r in table if unicodedata.normalize("NFC", r["student_id"]) == NFC_JOSE]
    assert len(twins) == 2
    for r in twins:
        assert r["score"] == r["raw_score"] == "" and "two Unicode forms" in r["notes"]
        assert ascii(NFC_JOSE) in r["notes"] and ascii(NFD_JOSE) in r["notes"]
    alice = next(r for r in table if r["student_id"] == "alice")
    assert alice["score"] == "0" and alice["notes"] == ""


def test_nbgrader_s_rows_are_kept_for_ordinary_names(gradebook, tmp_path):
    """Where names are plain, the rows are nbgrader's own (its plugin's output, read back)."""
    from nbgrader.plugins.export import CsvExportPlugin

    theirs = tmp_path / "theirs.csv"
    CsvExportPlugin(to=str(theirs)).export(gradebook)
    ours = list(csv.DictReader(io.StringIO(_export(gradebook, tmp_path), newline="")))
    plain = [r for r in csv.DictReader(io.StringIO(theirs.read_text(encoding="utf-8")))
             if r["student_id"] == "alice"]
    mine = [r for r in ours if r["student_id"] == "alice"]
    assert len(plain) == len(mine) == 1
    numbers = ("raw_score", "late_submission_penalty", "score", "max_score")
    assert {k: v for k, v in mine[0].items() if k not in numbers + ("provisional", "notes")} == \
        {k: v for k, v in plain[0].items() if k not in numbers}
    assert all(float(mine[0][k]) == float(plain[0][k]) for k in numbers)
