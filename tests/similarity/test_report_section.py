"""The class view that `autograder report` writes gains a "possible copies" section when a
similarity run is there (`similarity --html` into the view's `similarity/` folder, or
`report --similarity DIR`), linked to the run's side-by-side pages."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from autograder.batch.store import ResultStore
from autograder.cli import app
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult

from .test_cli import _class


def _db(tmp_path: Path) -> Path:
    store = ResultStore(tmp_path / "results.sqlite")
    for student in ("ann", "ben", "cal"):
        result = ExerciseResult("tiled_matmul", f"{student}.py", "sim", [TestResult(
            name="public: width 17", kind=Kind.CORRECTNESS, visibility="public",
            status=Status.PASSED, points=10, max_points=10, message="correct")])
        store.save(f"{student}/tiled_matmul", student, result.to_dict())
    return tmp_path / "results.sqlite"


def _links(page: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', page)


def _similarity(tmp_path: Path, out: Path) -> None:
    result = CliRunner().invoke(app, ["similarity", str(_class(tmp_path)), "-e",
                                      "tiled_matmul", "--html", str(out)])
    assert result.exit_code == 0, result.output


def _report(db: Path, view: Path, *more: str):
    return CliRunner().invoke(app, ["report", "--db", str(db), "--html", str(view), *more])


def test_a_run_in_the_views_similarity_folder_adds_the_section(tmp_path):
    db, view = _db(tmp_path), tmp_path / "view"
    assert _report(db, view).exit_code == 0
    assert "Possible copies" not in (view / "class.html").read_text()
    _similarity(tmp_path, view / "similarity")
    result = _report(db, view)
    assert result.exit_code == 0, result.output
    page = (view / "class.html").read_text()
    section = page.split('id="possible-copies"')[1].split("<h2>")[0]
    assert "never a verdict" in section
    assert "ann/tiled_matmul" in section and "cal/tiled_matmul" in section
    pages = [h for h in _links(section) if h.endswith(".html")]
    assert "similarity/tiled_matmul-001.html" in pages
    assert all((view / h).is_file() for h in pages)


def test_report_similarity_names_a_run_elsewhere_and_links_it_relatively(tmp_path):
    db, view, run = _db(tmp_path), tmp_path / "view", tmp_path / "runs" / "copies"
    _similarity(tmp_path, run)
    result = _report(db, view, "--similarity", str(run))
    assert result.exit_code == 0, result.output
    section = (view / "class.html").read_text().split('id="possible-copies"')[1]
    pages = [h for h in _links(section) if "tiled_matmul-0" in h]
    assert pages and all(h.startswith("../runs/copies/") and (view / h).resolve().is_file()
                         for h in pages)


def test_a_folder_without_a_run_is_a_clear_error_and_a_broken_summary_is_said(tmp_path):
    db, view = _db(tmp_path), tmp_path / "view"
    (tmp_path / "empty").mkdir()
    result = _report(db, view, "--similarity", str(tmp_path / "empty"))
    assert result.exit_code == 2 and "holds no similarity run" in result.output
    (view / "similarity").mkdir(parents=True)
    (view / "similarity" / "similarity.json").write_text("{not json")
    result = _report(db, view)
    assert result.exit_code == 0, result.output
    assert "The similarity run was not read" in (view / "class.html").read_text()
