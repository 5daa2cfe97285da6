"""The instructor's advice from known-bad files (issue 32, item 18): a ``# kernelgrade-advice:``
line in ``mutants/*.py`` reaches a student whose result shows that file's failure signature
(:mod:`autograder.judge.advice`), never its name; ``autograder check`` finds advice that its own
file does not get, and two files that cannot be told apart.

Matching is tested on result objects; one grading on the simulator of a student's own
missing-barrier mistake (``tests/files/advice/matmul_one_barrier.py``) shows the advice
everywhere a student reads the report, and the solution's grading shows none. A wheel and a
Gradescope bundle carry no known-bad file, so the advice travels as its extract
(``assignments/<name>/advice.json``, :func:`known_bad.extract`): the same student file graded by
the bundle's wheel installed in a fresh venv, as Gradescope runs it, gets the same advice."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from markupsafe import escape

from autograder import exercises
from autograder.exercises import known_bad
from autograder.judge import advice
from autograder.report import export, html, parts
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult

from conftest import FILES, graded_once

RACES = "diagnostic: shared-memory races"
MEMORY = "diagnostic: memory accesses"


def _test(name, kind, status, points=5.0):
    earned = points if status is Status.PASSED else 0.0
    return TestResult(name=name, kind=kind, visibility="hidden", status=status, points=earned,
                      max_points=points)


def _result(correctness=(Status.FAILED, Status.PASSED), concept=Status.PASSED, found=(),
            device="sim"):
    """A result with the given correctness statuses, concept status and failed diagnostics."""
    tests = [_test(f"hidden: n {i}", Kind.CORRECTNESS, s) for i, s in enumerate(correctness)]
    tests.append(_test("concept: tile in shared memory", Kind.CONCEPT, concept, 15.0))
    for name in (RACES, MEMORY, "diagnostic: boundary checks"):
        tests.append(_test(name, Kind.DIAGNOSTIC,
                           Status.FAILED if name in found else Status.PASSED, 0.0))
    return ExerciseResult("tiled_matmul", "student.py", device, tests)


def _file(folder: Path, name: str, header: str) -> Path:
    path = folder / name
    path.write_text(header + '"""A known-bad kernel."""\nX = 1\n', encoding="utf-8")
    return path


HALO = ("# kernelgrade-expect: correctness=failed, correctness=passed, concept=passed\n"
        "# kernelgrade-advice: Load the halo:\n# kernelgrade-advice:   the first threads too.\n")
RACE = ("# kernelgrade-expect: correctness=failed, concept=failed, "
        "diagnostic: shared-memory races=failed\n# kernelgrade-advice: Add the second barrier.\n")


def test_advice_lines_are_read_from_the_header_only(tmp_path):
    path = _file(tmp_path, "halo.py", HALO + "# kernelgrade-advice: still the header.\n")
    assert known_bad.advice(path) == "Load the halo: the first threads too. still the header."
    late = tmp_path / "late.py"
    late.write_text("X = 1\n# kernelgrade-advice: too late\n", encoding="utf-8")
    assert known_bad.advice(late) == ""
    [advised] = known_bad.advised([path, late])
    assert advised.label == f"{tmp_path.name}/halo.py" and len(advised.signature("sim")) == 3


def test_a_result_matches_when_every_expectation_holds_and_the_findings_agree(tmp_path):
    [halo] = known_bad.advised([_file(tmp_path, "halo.py", HALO)])
    sig = halo.signature("sim")
    assert advice.matches(sig, _result())
    # wrong everywhere: not this mistake (correctness=passed fails)
    assert not advice.matches(sig, _result(correctness=(Status.FAILED, Status.FAILED)))
    # the same outputs, and a race the signature does not name: the findings disagree
    assert not advice.matches(sig, _result(found=(RACES,)))
    # lost nothing: no advice, whatever the expectations say
    assert not advice.matches(sig, _result(correctness=(Status.PASSED,)))
    assert not advice.matches((), _result())


def test_the_findings_named_by_the_signature_must_all_be_there(tmp_path):
    [race] = known_bad.advised([_file(tmp_path, "race.py", RACE)])
    sig = race.signature("sim")
    racy = dict(correctness=(Status.FAILED,), concept=Status.FAILED)
    assert advice.matches(sig, _result(found=(RACES,), **racy))
    assert not advice.matches(sig, _result(**racy))  # no race found
    assert not advice.matches(sig, _result(found=(RACES, MEMORY), **racy))  # one more finding
    [any_finding] = known_bad.advised([_file(
        tmp_path, "any.py", "# kernelgrade-expect: diagnostic=failed\n# kernelgrade-advice: a\n")])
    assert advice.matches(any_finding.signature("sim"), _result(found=(RACES, MEMORY), **racy))


def test_backend_lines_join_the_signature_on_their_backend_only(tmp_path):
    [f] = known_bad.advised([_file(tmp_path, "t.py", "# kernelgrade-expect: correctness=failed\n"
                                   "# kernelgrade-expect-gpu: timing=failed\n"
                                   "# kernelgrade-advice: Pad the tile.\n")])
    assert advice.matches(f.signature("sim"), _result())
    gpu = _result(device="gpu:NVIDIA H100")
    assert not advice.matches(f.signature(gpu.device), gpu)  # no timing test failed
    gpu.tests.append(_test("timing", Kind.TIMING, Status.FAILED, 25.0))
    assert advice.matches(f.signature(gpu.device), gpu)


def test_the_most_specific_match_wins_and_ties_show_at_most_two(tmp_path):
    broad = _file(tmp_path, "a_broad.py",
                  "# kernelgrade-expect: correctness=failed\n# kernelgrade-advice: Broad.\n")
    halo = _file(tmp_path, "b_halo.py", HALO)
    files = known_bad.advised([broad, halo])
    assert [f.advice for f in advice.choose(files, _result())] == [
        "Load the halo: the first threads too."]
    assert [f.advice for f in advice.choose(files, _result(concept=Status.FAILED))] == ["Broad."]
    tied = known_bad.advised([_file(tmp_path, f"{c}.py", "# kernelgrade-expect: "
                                    f"correctness=failed\n# kernelgrade-advice: {c}.\n")
                              for c in ("One", "Two", "Three")])
    assert [f.advice for f in advice.choose(tied, _result())] == ["One.", "Two."]


def test_apply_adds_the_advice_once_without_the_file_name(tmp_path):
    files = known_bad.advised([_file(tmp_path, "halo_not_loaded.py", HALO)])
    result = _result()
    advice.apply(result, files)
    advice.apply(result, files)
    assert result.notes == [known_bad.ADVICE_NOTE + "Load the halo: the first threads too."]
    assert "halo_not_loaded" in "".join(result.instructor_notes)
    assert known_bad.unmet(tmp_path / "halo_not_loaded.py", result) == []
    assert any("kernelgrade-advice" in p
               for p in known_bad.unmet(tmp_path / "halo_not_loaded.py", _result()))


def test_equal_signatures_with_different_advice_are_reported(tmp_path):
    a = _file(tmp_path, "a.py", "# kernelgrade-expect: correctness=failed, concept=passed\n"
              "# kernelgrade-advice: Load the halo.\n")
    b = _file(tmp_path, "b.py", "# kernelgrade-expect: concept=passed, correctness=failed\n"
              "# kernelgrade-advice: Copy the boundary.\n")
    same = _file(tmp_path, "c.py", "# kernelgrade-expect: concept=passed, correctness=failed\n"
                 "# kernelgrade-advice: Load the halo.\n")
    gpu_only = _file(tmp_path, "d.py", "# kernelgrade-expect: correctness=failed, "
                     "concept=passed\n# kernelgrade-expect-gpu: timing=failed\n"
                     "# kernelgrade-advice: Time it.\n")
    [conflict] = known_bad.advice_conflicts([a, b])
    assert "a.py and " in conflict and "b.py" in conflict
    assert known_bad.advice_conflicts([a, same]) == []
    [sim_only] = known_bad.advice_conflicts([a, gpu_only])  # equal on the simulator only
    assert "the simulator" in sim_only and "a GPU" not in sim_only


WITH_ADVICE = [n for n in exercises.names() if known_bad.advised(exercises.mutants(n))]
STUDENT = FILES / "advice" / "matmul_one_barrier.py"
MATMUL = "tiled_matmul"


def _note(exercise: str, mutant: str) -> str:
    return known_bad.ADVICE_NOTE + known_bad.advice(
        exercises.folder(exercise) / exercises.MUTANTS / mutant)


def test_built_in_advice_is_declared_without_conflicts_and_shipped_as_its_extract():
    assert {"tiled_matmul", "transpose"} <= set(WITH_ADVICE)
    for name in WITH_ADVICE:
        files = known_bad.advised(exercises.mutants(name))
        assert all(f.advice.endswith(".") for f in files), name
        assert known_bad.advice_conflicts(exercises.mutants(name)) == [], name
        # the extract the wheel carries says the same (python -m autograder.authoring.docs)
        shipped = known_bad.read_extract(exercises.folder(name) / known_bad.ADVICE_FILE)
        assert [(f.label, f.advice, f.signature("sim"), f.signature("gpu:x")) for f in shipped] \
            == [(f.label, f.advice, f.signature("sim"), f.signature("gpu:x")) for f in files]


def test_the_extract_stands_in_for_the_files_where_they_are_not_there(tmp_path):
    """An installed exercise folder (no mutants/) reads its advice.json; a folder with
    mutants/ reads them; a broken extract gives no advice, never an error."""
    checkout = tmp_path / "checkout"
    (checkout / "mutants").mkdir(parents=True)
    _file(checkout / "mutants", "race.py", RACE)
    _file(checkout / "mutants", "plain.py", "# kernelgrade-expect: concept=failed\n")
    _file(checkout / "mutants", "gpu.py", "# kernelgrade-expect-gpu: timing=failed\n"
                "# kernelgrade-expect: concept=failed\n# kernelgrade-advice: Time it.\n")
    files = known_bad.for_exercise(checkout)
    assert [f.label for f in files] == ["mutants/gpu.py", "mutants/race.py"]
    text = known_bad.extract(files)
    assert "def " not in text and "X = 1" not in text  # advice and expectations, no code
    installed = tmp_path / "installed"
    installed.mkdir()
    (installed / known_bad.ADVICE_FILE).write_text(text, encoding="utf-8")
    got = known_bad.for_exercise(installed)
    assert [(f.label, f.advice) for f in got] == [(f.label, f.advice) for f in files]
    for device in ("sim", "gpu:NVIDIA H100"):
        assert [f.signature(device) for f in got] == [f.signature(device) for f in files]
    racy = _result(correctness=(Status.FAILED,), concept=Status.FAILED, found=(RACES,))
    assert [f.advice for f in advice.choose(got, racy)] == ["Add the second barrier."]
    assert known_bad.extract([]) is None and known_bad.for_exercise(tmp_path / "none") == []
    for broken in ("{", '{"advice": 3}', '{"advice": [{"file": "a"}]}', "[]",
                   '{"advice": [{"file": "a", "advice": "b", "expect": 5}]}'):
        (installed / known_bad.ADVICE_FILE).write_text(broken, encoding="utf-8")
        assert known_bad.for_exercise(installed) == [], broken


def test_a_stale_extract_is_found_by_the_documents_check(monkeypatch, capsys):
    from autograder.authoring import docs

    assert docs.main(["--check"]) == 0, capsys.readouterr().out
    monkeypatch.setattr(known_bad, "advice", lambda path: "Something else.")
    assert docs.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert f"assignments/{MATMUL}/{known_bad.ADVICE_FILE}" in out


def test_the_wheel_and_a_course_bundle_carry_the_extract_and_no_known_bad_file(tmp_path,
                                                                              monkeypatch):
    from autograder.gradescope import bundle
    from autograder.gradescope.wheel import _contents

    packed = _contents()  # what the Gradescope bundle's wheel holds (pip's: test_packaging)
    for name in WITH_ADVICE:
        assert f"kernelgrade_assignments/{name}/{known_bad.ADVICE_FILE}" in packed
    assert not any("/mutants/" in n for n in packed)
    # a course's own exercise: its extract is written when the bundle is built
    course = tmp_path / "course"
    (course / "mutants").mkdir(parents=True)
    (course / "exercise.py").write_text("X = 1\n", encoding="utf-8")
    _file(course / "mutants", "race.py", RACE)
    monkeypatch.setattr(exercises, "is_builtin", lambda name: False)
    monkeypatch.setattr(exercises, "folder", lambda name: course)
    monkeypatch.setattr(exercises, "shared_helpers", lambda name: [])
    files = bundle.course_files("own")
    assert set(files) == {"assignments/own/exercise.py", f"assignments/own/{known_bad.ADVICE_FILE}"}
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / known_bad.ADVICE_FILE).write_bytes(files[f"assignments/own/{known_bad.ADVICE_FILE}"])
    assert [f.advice for f in known_bad.for_exercise(shipped)] == ["Add the second barrier."]


def test_a_students_missing_barrier_gets_the_advice_and_the_solution_none():
    """End to end: the student's own kernel (not the known-bad file) matches the signature of
    tiled_matmul's missing_second_barrier.py; every student view shows the advice, none names
    the file."""
    result = graded_once(STUDENT, MATMUL)
    note = _note(MATMUL, "missing_second_barrier.py")
    assert result.notes.count(note) == 1, (result.notes, [(t.name, t.status) for t in result.tests])
    shown = [parts.header(result, reveal_hidden=False),
             export.to_gradescope(result.to_dict())["output"]]
    for text in shown:
        assert note in text and "missing_second_barrier" not in text and "mutants" not in text
    fragment = html.render_part_fragment(result, "correctness", with_header=True)
    assert str(escape(note)) in fragment and "missing_second_barrier" not in fragment
    assert any("missing_second_barrier.py" in n for n in result.instructor_notes)
    solution = graded_once(exercises.solution_path(MATMUL), MATMUL)
    assert not [n for n in solution.notes if n.startswith(known_bad.ADVICE_NOTE)]


def test_an_installed_kernelgrade_on_gradescope_gives_the_same_advice(
        gradescope_bundle, gradescope_python, tmp_path):
    """The bundle's wheel installed in a fresh venv (no mutants/ anywhere) grades the student's
    file as Gradescope does; its output shows the advice from the shipped extract."""
    from test_gradescope import container, run_autograder

    with zipfile.ZipFile(gradescope_bundle) as z:
        assert not any("/mutants/" in n for n in z.namelist())
    root = container(gradescope_bundle, tmp_path, {"tiled_matmul.py": STUDENT.read_text()})
    ran, results = run_autograder(root, gradescope_python)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    note = _note(MATMUL, "missing_second_barrier.py")
    assert results["output"].count(note) == 1, results["output"]
    # the file is named to the instructor only (extra_data is stored, not shown to students)
    assert "missing_second_barrier" not in results["output"] + json.dumps(results["tests"])
    assert any("missing_second_barrier.py" in n for n in results["extra_data"]["instructor_notes"])


def test_check_fails_on_files_it_cannot_tell_apart(tmp_path, monkeypatch):
    """``autograder check``'s gradings step (its gradings stubbed: each row ok) fails on two
    known-bad files with one signature and two sentences, and names both."""
    from autograder.authoring import check, solutions

    files = [_file(tmp_path, f"{c}.py", "# kernelgrade-expect: correctness=failed\n"
                   f"# kernelgrade-advice: {c}.\n") for c in ("halo", "boundary")]
    monkeypatch.setattr(exercises, "mutants", lambda name: files)
    monkeypatch.setattr(solutions, "check_all", lambda names, device, jobs=1: [
        solutions.CheckRow(MATMUL, p.name, "x", "y", True, 0.0, "sim") for p in files])
    step = check._gradings(MATMUL, "sim", 1)
    assert step.ok is False and "halo.py and " in step.detail and "boundary.py" in step.detail
    files[1].write_text(files[1].read_text().replace("boundary.", "halo."), encoding="utf-8")
    assert check._gradings(MATMUL, "sim", 1).ok is True
