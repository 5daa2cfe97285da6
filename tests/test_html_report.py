"""HTML reports (autograder/report/html.py, class_view.py): a passing submission, one with
wrong elements, a slow one (synthetic timing details: there is no GPU here), the class view, the
CLI, and a real headless Chromium that must show the page with every image intact."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from autograder.cli import app
from autograder.judge.compare import MASK_CELLS, wrong_mask
from autograder.exercises.base import Tolerance
from autograder.report import class_view, html
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.batch.store import ResultStore
from autograder.timing.measure import ratio_stats, timing_details

from conftest import EXERCISES, TEST_DEVICE

PNG = b"\x89PNG\r\n\x1a\n"
TOL = Tolerance(rel_frobenius=1e-4)
_IMG = re.compile(r"<img\b[^>]*>", re.I)
_SRC = re.compile(r'\bsrc="([^"]*)"')


def images(page: str) -> list[bytes]:
    """The decoded bytes of every <img> of ``page``; fails on one that is not an inline PNG."""
    out = []
    for tag in _IMG.findall(page):
        src = _SRC.search(tag).group(1)
        assert src.startswith("data:image/png;base64,"), tag[:120]
        data = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert data.startswith(PNG)
        Image.open(io.BytesIO(data)).verify()  # a whole, decodable PNG
        out.append(data)
    return out


def _test(name, kind, status, points, max_points, message="", details=None):
    return TestResult(name=name, kind=kind, visibility="hidden", status=status, points=points,
                      max_points=max_points, message=message, details=details)


def passing() -> ExerciseResult:
    return ExerciseResult("tiled_matmul", "alice.py", "sim", [
        _test("public: width 17", Kind.CORRECTNESS, Status.PASSED, 10, 10, "correct"),
        _test("concept: tiles", Kind.CONCEPT, Status.PASSED, 15, 15, "2048 bytes"),
        _test("timing: against the instructor's kernel", Kind.TIMING, Status.SKIPPED, 0, 25,
              "timing needs a GPU: the simulator gives no timing"),
        _test("diagnostic: performance hints", Kind.DIAGNOSTIC, Status.PASSED, 0, 0,
              "nothing to report", {"hints": [], "unavailable": ["registers per thread"]}),
    ], seed=7)


def dropped_last_tile(width=40, tile=16) -> tuple[np.ndarray, np.ndarray]:
    """C of a matmul whose last column tile was never computed (NaN: never written)."""
    rng = np.random.default_rng(0)
    expected = rng.standard_normal((width, width)).astype(np.float32)
    got = expected.copy()
    got[:, (width // tile) * tile:] = np.nan
    return got, expected


def wrong() -> ExerciseResult:
    got, expected = dropped_last_tile()
    mask = wrong_mask("C", got, expected, TOL)
    src = EXERCISES / "tiled_matmul" / "mutants" / "floor_phase_count.py"
    return ExerciseResult("tiled_matmul", str(src), "sim", [
        _test("public: width 40", Kind.CORRECTNESS, Status.FAILED, 0, 10,
              "320 of 1600 elements wrong; first at C[0, 32]", {"wrong_masks": [mask]}),
        _test("diagnostic: barriers", Kind.DIAGNOSTIC, Status.FAILED, 0, 0,
              "line 21, line 22: a barrier reached by only 1 of 256 live threads"),
    ])


def slow() -> ExerciseResult:
    rng = np.random.default_rng(1)
    student = list(1.32 * (1 + 0.01 * rng.standard_normal(20)))
    instructor = list(1.0 + 0.01 * rng.standard_normal(20))
    details = timing_details(student, instructor, ratio_stats(student, instructor), 1.25, 2.0,
                             {"width": 2048})
    return ExerciseResult("tiled_matmul", "bob.py", "gpu:NVIDIA H200", [
        _test("public: width 17", Kind.CORRECTNESS, Status.PASSED, 10, 10, "correct"),
        _test("timing: against the instructor's kernel", Kind.TIMING, Status.FAILED, 21.0, 25,
              "ratio 1.32x; likeliest cause: line 23: float64 arithmetic", details),
        _test("diagnostic: performance hints", Kind.DIAGNOSTIC, Status.PASSED, 0, 0, "1 hint",
              {"hints": [{"kind": "float64", "line": 23, "weight": 5.0,
                          "text": "line 23 (`tmp += a * b`): float64 arithmetic"}],
               "unavailable": []}),
    ])


# -- the mask --------------------------------------------------------------------------------

def test_mask_shows_a_dropped_last_tile_and_stays_small():
    got, expected = dropped_last_tile()
    m = wrong_mask("C", got, expected, TOL)
    assert m["shape"] == [40, 40] and m["cell"] == [1, 1] and m["first"] == [0, 32]
    assert all(row == "." * 32 + "9" * 8 for row in m["rows"])
    assert m["unwritten"] == 320 and m["unwritten_rows"] == m["rows"]
    big = np.zeros((300, 200), np.float32)
    bad = big.copy()
    bad[-1, :] = 1.0  # a missing boundary check on the last row
    m = wrong_mask("C", bad, big, TOL)
    assert len(m["rows"]) <= MASK_CELLS and all(len(r) <= MASK_CELLS for r in m["rows"])
    assert m["rows"][-1].strip(".") and not any(r.strip(".") for r in m["rows"][:-1])
    assert m["first"] == [299, 0] and m["wrong"] == 200
    json.dumps(m)


def test_mask_of_a_1d_output_wraps_and_integers_are_exact():
    expected = np.arange(1000, dtype=np.int32)
    got = expected.copy()
    got[256:512] = -1
    m = wrong_mask("out", got, expected, Tolerance(rel_frobenius=0, exact=True))
    assert m["layout"] == "wrapped" and m["first"] == [256] and m["wrong"] == 256
    flat = "".join(m["rows"])
    assert flat[256:512] == "9" * 256 and set(flat[:256] + flat[512:1000]) == {"."}
    assert wrong_mask("out", expected, expected, TOL) is None


def test_details_keep_the_json_contract():
    plain = _test("t", Kind.CORRECTNESS, Status.PASSED, 1, 1, "correct").to_dict()
    assert "details" not in plain
    assert set(plain) == {"name", "kind", "visibility", "status", "points", "max_points",
                          "message"}
    r = slow()
    d = json.loads(json.dumps(r.to_dict()))
    assert d["tests"][1]["details"]["timing"]["ratio"] == pytest.approx(1.32, rel=0.02)
    back = ExerciseResult.from_dict(d)
    assert back.to_dict() == r.to_dict()


# -- the pages -------------------------------------------------------------------------------

def test_passing_page_has_no_pictures_and_says_what_needs_a_gpu():
    page = html.render_result(passing())
    assert images(page) == []
    assert "provisional: 25 points need a GPU" in page
    assert "need a GPU: the simulator gives no timing" in page
    assert "Nothing to report" in page
    assert "What went wrong" not in page


def test_wrong_elements_page_has_a_heatmap_and_the_lines():
    page = html.render_result(wrong(), html.load_source_quietly(wrong().submission))
    assert len(images(page)) == 1
    assert "first wrong at [0, 32]" in page and "320 never written" in page
    listing = re.findall(r'<span class="hl"><span class="ln">(line \d+)</span>', page)
    assert listing == ["line 21", "line 22"]  # the lines the message names, highlighted


def test_cases_that_failed_the_same_way_share_one_card():
    msg = "line 3: the code does not parse: expected ':'"
    r = ExerciseResult("tiled_matmul", "x.py", "sim", [
        _test(f"hidden: width {w}", Kind.CORRECTNESS, Status.ERROR, 0, 5, msg) for w in (1, 2, 3)])
    page = html.render_result(r)
    assert page.count("the code does not parse") == 3 + 1  # the table's rows, one card
    assert "hidden: width 1 and 2 more" in page


def test_slow_page_has_the_timing_chart_and_throughput():
    page = html.render_result(slow())
    assert "<link" not in page and "<script" not in page  # one self-contained file
    assert len(images(page)) == 2  # times with the 95% interval; GFLOP/s bars
    assert "GFLOP/s" in page and "device peak (nominal): 67,000" in page
    rate = 2 * 2048 ** 3 / 1e9 / (np.median(slow().tests[1].details["timing"]["student_ms"]) / 1e3)
    assert f"your kernel: {rate:,.0f} GFLOP/s" in page
    assert "line 23 (`tmp += a * b`): float64 arithmetic" in page


def test_fragment_is_one_div_whose_css_touches_nothing_outside_it():
    r = wrong()
    r.tests[0].visibility = "public"
    frag = html.render_part_fragment(r, "correctness", html.load_source_quietly(r.submission))
    assert frag.startswith('<div class="kg-report">') and frag.rstrip().endswith("</div>")
    assert "<html" not in frag and "<body" not in frag and "<main" not in frag
    assert len(images(frag)) == 1 and "first wrong at [0, 32]" in frag
    css = re.search(r"<style>(.*?)</style>", frag, re.S).group(1)
    assert "&#34;" not in css  # not HTML-escaped: the font names keep their quotes
    selectors = [sel.strip() for block in re.findall(r"(?:^|[}])\s*([^{}@]+)\{", css)
                 for sel in block.split(",")]
    assert selectors and all(sel.startswith(".kg-report") for sel in selectors), selectors
    assert "rem" not in css  # sizes follow the fragment's font, not the host page's root
    # a hidden case never gets a card, even with a picture in its details
    r.tests[0].visibility = "hidden"
    assert images(html.render_part_fragment(r, "correctness")) == []


def _rows(tmp_path) -> list[dict]:
    store = ResultStore(tmp_path / "r.sqlite")
    for i, r in enumerate([passing(), wrong(), wrong(), slow()]):
        store.save(f"s{i}/01_tiled_matmul", f"s{i}", r.to_dict())
    return store.rows()


def test_class_view_counts_students_per_problem(tmp_path):
    rows = _rows(tmp_path)
    html.write_batch(rows, tmp_path / "out")
    page = class_view.write_class_view(rows, tmp_path / "out").read_text()
    summary = class_view.summarize(rows)["exercises"][0]
    cats = dict(summary["categories"])
    assert cats["output elements never written"] == 2
    assert cats["divergent barrier (cuda.syncthreads() in a branch)"] == 2
    assert cats["slower than the instructor's kernel (timing lost points)"] == 1
    assert cats["hint: float64 arithmetic in a float32 kernel"] == 1
    assert summary["provisional"] == 1  # only the simulator result with timing skipped
    assert "provisional: 25 points need a GPU" in page
    # the exercise's line says it once, in words: not "provisional score(s): provisional: ..."
    assert ("1 provisional score, not final until graded on a GPU: 25 points need a GPU "
            "(1 student)") in page, page
    assert "<p>4 submissions; mean" in page, page
    assert len(images(page)) == 2  # ratios; one histogram
    assert all((tmp_path / "out" / h).is_file()
               for h in re.findall(r'href="([^"]+)"', page))


def test_cli_report_and_missing_db(tmp_path):
    rows = _rows(tmp_path)
    assert rows
    res = CliRunner().invoke(app, ["report", "--db", str(tmp_path / "r.sqlite"), "--html",
                                   str(tmp_path / "view")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "view" / "class.html").is_file()
    res = CliRunner().invoke(app, ["report", "--db", str(tmp_path / "none.sqlite"), "--html",
                                   str(tmp_path / "view")])
    assert res.exit_code == 2


def test_cli_grade_html_shows_the_wrong_elements(tmp_path):
    """One real grading (simulator): the grader's masks reach the page."""
    out = tmp_path / "report.html"
    src = EXERCISES / "tiled_matmul" / "mutants" / "floor_phase_count.py"
    res = CliRunner().invoke(app, ["grade", str(src), "-e", "tiled_matmul", "--device",
                                   TEST_DEVICE, "--seed", "1", "--json", "--html", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)  # exactly one JSON object: "wrote ..." goes to stderr
    failed = [t for t in data["tests"] if t["kind"] == "correctness" and t["status"] == "failed"]
    assert failed and all(t["details"]["wrong_masks"] for t in failed)
    page = out.read_text()
    assert len(images(page)) >= len(failed)
    assert "diagnostic: performance hints" in page


# -- a real browser --------------------------------------------------------------------------

def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed, so the HTML report cannot be checked in a "
                    "browser: apt-get install -y chromium (Debian) — this test never skips")
    return exe


def _chromium_args(exe, profile) -> list[str]:
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}", "--window-size=412,900"]


@pytest.mark.parametrize("make", [wrong, slow], ids=["wrong", "slow"])
def test_report_in_headless_chromium(tmp_path, make):
    exe = _chromium()
    page = tmp_path / "report.html"
    html.write_result(make(), page)
    shot = tmp_path / "shot.png"
    base = _chromium_args(exe, tmp_path / "profile")
    done = subprocess.run(base + [f"--screenshot={shot}", page.as_uri()], capture_output=True,
                          timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-1500:]
    img = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert img.shape[:2] == (900, 412)
    assert img.std() > 10 and (img < 128).mean() > 0.005  # text and pictures, not blank
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0 and "<main>" in dom.stdout
    assert len(images(dom.stdout)) == len(images(page.read_text())) >= 1
    assert re.search(r'name="viewport" content="width=device-width', dom.stdout)


def test_page_names_of_keys_that_differ_only_in_accents_or_symbols_never_collide():
    """Each student's page has its own file: ``josé``, ``josè`` and ``jos`` once all became
    ``jos_occupancy.html``, and the last written overwrote the others."""
    keys = ["josé/occupancy", "josè/occupancy", "jos/occupancy", "jos_occupancy",
            "a b/tiled_matmul", "a_b/tiled_matmul"]
    names = [html.page_name(k) for k in keys]
    assert len(set(names)) == len(keys)
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+\.html", n) for n in names)
    assert html.page_name("jos_occupancy") == "jos_occupancy.html"
    assert html.page_name("josé/occupancy") == html.page_name("josé/occupancy")


def test_no_caption_of_pictures_where_no_case_has_one():
    """A case the race verdict failed, or one that raised, has no heatmap: the page says
    nothing of pictures above its card (the walk-through of issue 32 found the caption over
    a race's cards alone)."""
    race = ("counted as failed: WAR race on shared array sums (sums[1]): read at line 16 by "
            "thread (0, 0, 0), write at line 16 by thread (1, 0, 0)")
    case = _test("public: n 100", Kind.CORRECTNESS, Status.FAILED, 0, 5, race)
    case.visibility = "public"  # the grade cell's fragment shows a card for public cases only
    r = ExerciseResult("block_sum", "x.py", "sim", [case])
    for page in (html.render_result(r), html.render_part_fragment(r, "correctness")):
        assert "What went wrong" in page and "WAR race on shared array sums" in page
        assert images(page) == [] and "Each picture" not in page
    with_picture = html.render_result(wrong())
    assert len(images(with_picture)) == 1 and "Each picture is an output array" in with_picture


def test_the_heatmaps_caption_names_the_exercises_own_output():
    """Issue 32, item 19: the words above the heatmaps name the exercise's own output arrays and
    its layout, never the matmul's tiles and phases."""
    rng = np.random.default_rng(2)
    expected = rng.standard_normal(1000).astype(np.float32)
    got = expected.copy()
    got[-24:] = 0.0
    mask = wrong_mask("partial_sums", got, expected, TOL)
    r = ExerciseResult("block_sum", "x.py", "sim", [
        _test("public: n=1000", Kind.CORRECTNESS, Status.FAILED, 0, 10,
              "24 of 1000 elements wrong", {"wrong_masks": [mask]})])
    page = html.render_result(r)
    assert "Each picture is an output array (partial_sums)" in page
    assert "at the end of the array" in page and "last rows or columns" not in page
    assert "phase" not in page
    matmul = html.render_result(wrong())
    assert "output array (C)" in matmul and "along its last rows or columns" in matmul
