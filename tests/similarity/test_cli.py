"""`autograder similarity` on a small flat class folder: ranked pairs as text, one JSON object
per pair, side-by-side pages, and a clear message for a bad folder."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from autograder.cli import app

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "assignments/tiled_matmul/variants"


def _class(tmp_path: Path) -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text((VARIANTS / "grid_index.py").read_text())
    (folder / "ben.py").write_text((VARIANTS / "lesson_tile16.py").read_text())
    copied = (VARIANTS / "grid_index.py").read_text().replace("sA", "mine").replace(
        "tmp", "out")
    (folder / "cal.py").write_text("# all my own work\n" + copied)
    return folder


def test_pairs_are_printed_ranked_with_their_lines(tmp_path):
    result = CliRunner().invoke(app, ["similarity", str(_class(tmp_path)), "-e",
                                      "tiled_matmul"])
    assert result.exit_code == 0, result.output
    assert "never a verdict" in result.output
    pair_lines = [ln for ln in result.output.splitlines() if "  ~  " in ln and "lines" not in ln]
    first = pair_lines[0]
    assert "ann/tiled_matmul" in first and "cal/tiled_matmul" in first and first.startswith(" !")
    scores = [float(ln.split()[1] if ln.startswith(" !") else ln.split()[0])
              for ln in pair_lines]
    assert scores == sorted(scores, reverse=True)


def test_json_is_one_object_per_pair(tmp_path):
    result = CliRunner().invoke(app, ["similarity", str(_class(tmp_path)), "-e",
                                      "tiled_matmul", "--json"])
    assert result.exit_code == 0, result.output
    objects = [json.loads(ln) for ln in result.output.splitlines()]
    assert objects
    for o in objects:
        assert {"exercise", "a", "b", "score", "a_lines", "b_lines", "flagged"} <= set(o)
        assert 0 <= o["score"] <= 1
    assert {objects[0]["a"], objects[0]["b"]} == {"ann/tiled_matmul", "cal/tiled_matmul"}
    assert objects[0]["flagged"]


def test_html_writes_a_page_per_flagged_pair(tmp_path):
    out = tmp_path / "view"
    result = CliRunner().invoke(app, ["similarity", str(_class(tmp_path)), "-e",
                                      "tiled_matmul", "--html", str(out)])
    assert result.exit_code == 0, result.output
    index = (out / "index.html").read_text()
    assert "never a verdict" in index and "tiled_matmul-001.html" in index
    page = (out / "tiled_matmul-001.html").read_text()
    assert 'class="m"' in page and "cal/tiled_matmul" in page


def test_a_flat_folder_without_an_exercise_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["similarity", str(_class(tmp_path))])
    assert result.exit_code == 2
    assert "give --exercise" in result.output


def test_the_only_copy_of_the_instructors_solution_is_flagged_against_it(tmp_path):
    """No other file in the class is like it: the pair is with the instructor's solution,
    which `similarity` reads as an archive by itself."""
    folder = _class(tmp_path)
    solution = (ROOT / "solutions/tiled_matmul.py").read_text()
    (folder / "dan.py").write_text(solution.replace("tile_a", "left").replace("acc", "total"))
    result = CliRunner().invoke(app, ["similarity", str(folder), "-e", "tiled_matmul",
                                      "--json"])
    assert result.exit_code == 0, result.output
    dan = [o for o in map(json.loads, result.output.splitlines())
           if "dan/tiled_matmul" in (o["a"], o["b"])]
    top = max(dan, key=lambda o: o["score"])
    assert top["a"] == "dan/tiled_matmul" and top["b"] == "instructor:tiled_matmul.py"
    assert top["flagged"] and top["b_is_archive"]
    assert not [o for o in dan if o["flagged"] and not o["b_is_archive"]]
