"""The nbgrader course: build, config, generate_assignment, autograde into the gradebook, and the
example class made from the release notebooks."""

from __future__ import annotations

import os

import json
import re
import shutil

import pytest
from .nbhelpers import (ASSIGNMENTS, NAMES, ROOT, TEST_DEVICE, expected_parts, load_script,
                        nbgrader, output_text, scores, source_notebook, split_solution, submit,
                        written_names)
from traitlets.config.loader import PyFileConfigLoader
from traitlets.utils.importstring import import_item
from typer.testing import CliRunner

from autograder import exercises
from autograder.cli import app
from autograder.errors import GraderSetupError
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.course import AFTER_EXECUTE, NEVER_EXECUTE, CourseError, build_course

PARAMS = pytest.mark.parametrize("name", NAMES)


# --- building the course (no nbgrader run) ------------------------------------------------------

def test_build_writes_config_and_the_source_notebooks_built_from_the_folders(tmp_path,
                                                                              monkeypatch):
    monkeypatch.delenv("KERNELGRADE_SOLUTIONS", raising=False)  # loading the config sets it
    root = build_course(tmp_path / "course", device="sim", cell_timeout=33)
    # the instructor's folder holds the solutions an installed kernelgrade grades against
    for name in NAMES:
        copied = root / "instructor" / "solutions" / f"{name}.py"
        assert copied.read_bytes() == exercises.solution_path(name).read_bytes()
    for name in NAMES:  # source/<NN_name>/<name>.ipynb for every registered exercise
        ex = exercises.get(name)
        written = root / "source" / ex.assignment / f"{name}.ipynb"
        assert written.read_text(encoding="utf-8") == nbb.dumps(source_notebook(name))
    assert sorted(p.name for p in (root / "source").iterdir()) == sorted(ASSIGNMENTS)
    assert not list((root / "source").rglob("*.py"))  # no notebook.py, no solution.py
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    assert os.environ["KERNELGRADE_SOLUTIONS"] == str(root / "instructor" / "solutions")
    assert cfg.CourseDirectory.root == str(root)
    assert cfg.CourseDirectory.db_url == f"sqlite:///{root / 'gradebook.db'}"
    assert cfg.Execute.raise_on_iopub_timeout is False
    assert cfg.Execute.interrupt_on_timeout is True
    assert cfg.ExecutePreprocessor.timeout == 33 and cfg.Execute.timeout == 33
    # by default the notebooks are never run: our grading takes Execute's place
    steps = list(cfg.Autograde.autograde_preprocessors)
    assert steps == list(NEVER_EXECUTE) and not any("Execute" in s for s in steps)
    assert steps.index("nbgrader.preprocessors.SaveAutoGrades") < steps.index(
        "autograder.nbgrader.savenotes.SaveGradingNotes")
    assert cfg.GradeWithAutograder.allow_provisional is False
    assert "generate_assignment" in (root / "README.md").read_text()
    for step in steps + [cfg.ExportApp.plugin_class]:  # every name nbgrader will import
        assert import_item(step)
    other = build_course(tmp_path / "run", device="sim", run_notebooks=True,
                         allow_provisional=True)
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(other)).load_config()
    assert list(cfg.Autograde.autograde_preprocessors) == list(AFTER_EXECUTE)
    assert AFTER_EXECUTE[0] == "nbgrader.preprocessors.Execute"
    assert cfg.GradeWithAutograder.allow_provisional is True


def test_build_refuses_to_overwrite_a_course_and_bad_arguments(tmp_path):
    build_course(tmp_path, device="auto")
    with pytest.raises(CourseError, match="--force"):
        build_course(tmp_path)
    build_course(tmp_path, force=True)
    with pytest.raises(CourseError, match="device"):
        build_course(tmp_path / "b", device="cpu")
    with pytest.raises(CourseError, match="unknown exercise 'nope'"):
        build_course(tmp_path / "c", names=["nope"])
    with pytest.raises(CourseError, match="no exercises"):
        build_course(tmp_path / "c", names=[])
    assert not (tmp_path / "c").exists()
    one = build_course(tmp_path / "one", names=["block_sum"])
    assert [p.name for p in (one / "source").iterdir()] == [exercises.get("block_sum").assignment]


def test_build_without_instructor_solutions_names_the_variable_and_writes_nothing(
        tmp_path, monkeypatch):
    """An installed kernelgrade has no solution.py: without $KERNELGRADE_SOLUTIONS, course
    build stops with one line naming it (exit 2) before it writes anything."""
    monkeypatch.setattr(exercises, "SOLUTIONS_FOLDER", "absent")
    monkeypatch.delenv(exercises.SOLUTIONS_ENV, raising=False)
    with pytest.raises(GraderSetupError, match=exercises.SOLUTIONS_ENV):
        build_course(tmp_path / "lib")
    assert not (tmp_path / "lib").exists()
    result = CliRunner().invoke(app, ["course", "build", str(tmp_path / "cli")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert exercises.SOLUTIONS_ENV in lines[0]
    assert not (tmp_path / "cli").exists()


def test_cli_course_build(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["course", "build", str(tmp_path / "c"), "--device", "sim",
                                 "--submitted", str(ROOT / "examples" / "submitted")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c" / "submitted" / "alice" / "01_tiled_matmul" /
            "tiled_matmul.ipynb").is_file()
    config = (tmp_path / "c" / "nbgrader_config.py").read_text()
    assert "os.environ.setdefault('KERNELGRADE_DEVICE', 'sim')" in config
    assert "c.GradeWithAutograder.allow_provisional = False" in config
    result = runner.invoke(app, ["course", "build", str(tmp_path / "d"), "--device", "sim",
                                 "--allow-provisional", "--run-notebooks"])
    assert result.exit_code == 0, result.output
    config = (tmp_path / "d" / "nbgrader_config.py").read_text()
    assert "c.GradeWithAutograder.allow_provisional = True" in config
    assert "'nbgrader.preprocessors.Execute'" in config
    again = runner.invoke(app, ["course", "build", str(tmp_path / "c")])
    assert again.exit_code == 2 and "--force" in again.output


# --- nbgrader generate_assignment -----------------------------------------------------------------

@PARAMS
def test_release_has_no_solution_code_and_no_hidden_tests(released_course, name):
    ex = exercises.get(name)
    release = nbb.read(released_course / "release" / ex.assignment / f"{name}.ipynb")
    text = json.dumps(release)
    for secret in (nbb.BEGIN_SOLUTION, nbb.END_SOLUTION, nbb.BEGIN_HIDDEN, nbb.END_HIDDEN,
                   "grade_this_notebook", "autograder.nbgrader.cells"):
        assert secret not in text, secret
    (answer,) = nbb.cells_with(source_notebook(name), solution=True)
    _, regions = split_solution(answer.source)
    (solution,) = nbb.cells_with(release, solution=True)
    assert solution.source.count("raise NotImplementedError()") == len(regions)
    for fn in written_names(ex):  # the scaffolding stays
        assert f"def {fn}(" in solution.source
    hidden_lines = {ln.strip() for region in regions for ln in region.splitlines()} - {""}
    assert not hidden_lines & {ln.strip() for ln in solution.source.splitlines()}
    graded = nbb.cells_with(release, grade=True)
    assert sum(c.metadata.nbgrader.points for c in graded) == ex.max_score
    assert all(c.metadata.nbgrader.locked for c in graded)
    public = [c for c in graded if c.metadata.nbgrader.points == 0]
    assert len(public) == 1 and f'run_public_tests("{name}")' in public[0].source  # stays
    hidden = [c for c in graded if c.metadata.nbgrader.points > 0]
    assert len(hidden) == len(expected_parts(ex))
    for cell in hidden:  # only the comment, and no module to import
        assert all(ln.startswith("#") for ln in cell.source.splitlines())
        assert "autograder." not in cell.source


def test_example_class_is_made_from_the_release_notebooks(released_course):
    """examples/submitted is the release notebooks with the files examples/class.json names (an
    instructor solution or a mutant of the exercise's folder) in their solution cells."""
    make_class = load_script("examples/make_class.py")
    releases = {}
    for assignment, (_, nb_name) in ASSIGNMENTS.items():
        releases[assignment] = (nb_name, nbb.read(released_course / "release" / assignment /
                                                  nb_name))
    files = make_class.class_files(releases)
    stale = [str(p) for p, text in files.items()
             if (ROOT / "examples" / p).read_text(encoding="utf-8") != text]
    assert not stale, "run python examples/make_class.py: " + ", ".join(stale)
    on_disk = {p.relative_to(ROOT / "examples")
               for p in (ROOT / "examples" / "submitted").rglob("*.ipynb")}
    assert on_disk == set(files)
    manifest = make_class.load_manifest()
    assert len(manifest) >= 6
    kinds = set()
    for student, work in manifest.items():
        for assignment, entry in work.items():
            name = ASSIGNMENTS[assignment][0]
            path = make_class.submission_file(name, entry["from"])
            assert path.is_file() and entry["what"]
            kinds.add("solution" if entry["from"] == "solution" else "mutant")
            nb = nbb.read(ROOT / "examples" / "submitted" / student / assignment /
                          ASSIGNMENTS[assignment][1])
            (cell,) = nbb.cells_with(nb, solution=True)
            code = cell.source
            assert code.strip() == make_class.submission_code(path).strip()
            assert "kernelgrade-expect" not in code and '"""' not in code.split("\n")[0]
    assert kinds == {"solution", "mutant"}


def test_a_class_entry_must_name_a_solution_or_a_mutant():
    make_class = load_script("examples/make_class.py")
    with pytest.raises(ValueError, match="neither 'solution' nor one of its mutants"):
        make_class.submission_file("tiled_matmul", "mutants/not_there.py")
    with pytest.raises(ValueError, match="neither"):
        make_class.submission_file("tiled_matmul", "exercise.py")
    with pytest.raises(ValueError, match="no exercise is assignment"):
        make_class.exercise_of("99_nothing")


# --- nbgrader autograde -------------------------------------------------------------------------

def test_autograde_puts_each_parts_points_in_the_gradebook(autograded_course):
    alice = scores(autograded_course, "01_tiled_matmul", "alice")
    bob = scores(autograded_course, "01_tiled_matmul", "bob")
    ex = exercises.get("tiled_matmul")
    cases = sum(c.points for c in ex.cases)
    on_sim = sum(c.points for c in ex.cases if c.sim)
    assert alice["tiled_matmul-public-tests"] == (0.0, 0.0)
    assert alice["tiled_matmul-hidden-concept"] == (15.0, 15.0)
    # tiles and barriers are there, but a tile load with no bound check reads outside A
    assert bob["tiled_matmul-hidden-concept"] == (0.0, 15.0)
    if TEST_DEVICE == "sim":
        assert alice["tiled_matmul-hidden-correctness"] == (on_sim, cases)
        assert alice["tiled_matmul-hidden-timing"] == (0.0, 25.0)  # skipped: no timing on sim
        # right at widths 16 (public and hidden) only; an index error everywhere else
        assert bob["tiled_matmul-hidden-correctness"] == (10.0, cases)
        assert bob["tiled_matmul-hidden-timing"] == (0.0, 25.0)
    else:
        assert alice["tiled_matmul-hidden-correctness"] == (cases, cases)
        assert bob["tiled_matmul-hidden-correctness"][0] < cases


def test_autograded_notebook_shows_the_student_what_failed(autograded_course):
    nb = nbb.read(autograded_course / "autograded" / "bob" / "01_tiled_matmul" /
                  "tiled_matmul.ipynb")
    (cell,) = [c for c in nb.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "").endswith(
                   "hidden-correctness")]
    # the report once: its text (for a terminal) and its HTML (for a page) in one output
    (report,) = [o for o in cell.outputs if o.output_type == "display_data"]
    text = report.data["text/plain"]
    assert "correctness: " in text and "public: width 17" in text
    assert "hidden: width" not in text and "hidden test 1: " in text  # no hidden sizes
    if TEST_DEVICE == "sim":
        assert "IndexError" in text and "cell 2, line" in text  # points at bob's line
    (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert float(result.data["text/plain"]) == scores(
        autograded_course, "01_tiled_matmul", "bob")["tiled_matmul-hidden-correctness"][0]
    assert not [o for o in cell.outputs if o.get("name") == "stderr"]
    # the same report in HTML: a card for the failed public case, none for hidden ones
    assert [o.output_type for o in cell.outputs] == ["display_data", "execute_result"]
    page = report.data["text/html"]
    assert page.startswith('<div class="kg-report">') and "public: width 17" in page
    assert "hidden: width" not in page and "hidden test 1" in page
    if TEST_DEVICE == "sim":  # an IndexError: bob's line, highlighted; no picture
        assert re.search(r'<span class="hl"><span class="ln">cell 2, line \d+</span>', page)
    else:  # stray reads give wrong elements: their heatmap
        assert '<img src="data:image/png;base64,' in page


#: erin's code does not parse (a parenthesis left open)
DOES_NOT_PARSE = '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        tile_a[ty, tx] = A[row, phase * TILE_WIDTH + tx] if (row < m and (phase * TILE_WIDTH + tx < n) else 0.0
        tile_b[ty, tx] = B[phase * TILE_WIDTH + ty, col] if (phase * TILE_WIDTH + ty < n and col < k) else 0.0
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = acc
'''

#: frank's phase counter advances over full tiles only: a partial last tile loops forever
HANGS_ON_A_PARTIAL_TILE = '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    num_phases = (n + TILE_WIDTH - 1) // TILE_WIDTH
    phase = 0
    while phase < num_phases:
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < m and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < k else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
        if (phase + 1) * TILE_WIDTH <= n:
            phase += 1
    if row < m and col < k:
        C[row, col] = acc
'''


@pytest.mark.slow
def test_autograde_survives_an_endless_loop_and_code_that_does_not_parse(released_course,
                                                                          tmp_path):
    """frank's kernel loops forever on a partial tile, erin's code does not parse: each costs its
    own tests, nbgrader's run goes on, erin gets 0 and frank only what ran before the hang, each
    with a message that says why. (Their code is here: the example class holds only solutions
    and mutants.)"""
    course = shutil.copytree(released_course, tmp_path / "course")
    submit(course, "erin", "02_matmul_any_size", DOES_NOT_PARSE)
    submit(course, "frank", "02_matmul_any_size", HANGS_ON_A_PARTIAL_TILE)
    nbgrader(course, "autograde", "02_matmul_any_size", "--log-level=WARN")
    messages = {}
    for student in ("erin", "frank"):
        got = scores(course, "02_matmul_any_size", student)
        assert len(got) == 4, got
        if student == "erin":
            assert all(points == 0.0 for points, _ in got.values()), got
        else:
            assert got["matmul_any_size-hidden-correctness"][0] <= 5.0, got
        nb = nbb.read(course / "autograded" / student / "02_matmul_any_size" /
                      "matmul_any_size.ipynb")
        messages[student] = "".join(output_text(o) for c in nb.cells if c.cell_type == "code"
                                    for o in c.outputs if o.get("name") == "stdout"
                                    or o.get("output_type") == "display_data")
    assert "the code does not parse" in messages["erin"]
    assert "did not finish in time" in messages["frank"]
