"""The instructor's advice from known-bad files (issue 32, item 18): a ``# kernelgrade-advice:``
line in ``mutants/*.py`` reaches a student whose result shows that file's failure signature
(:mod:`autograder.judge.advice`), never its name; ``autograder check`` finds advice that its own
file does not get, and two files that cannot be told apart.

Matching is tested on result objects; one grading on the simulator of a student's own halo
mistake (``tests/files/advice/conv1d_no_halo.py``) shows the advice everywhere a student reads
the report, and the solution's grading shows none."""

from __future__ import annotations

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
    return ExerciseResult("conv1d", "student.py", device, tests)


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


@pytest.mark.parametrize("name", ["conv1d", "tiled_matmul", "transpose"])
def test_built_in_advice_is_declared_without_conflicts(name):
    files = known_bad.advised(exercises.mutants(name))
    assert files and all(f.advice.endswith(".") for f in files)
    assert known_bad.advice_conflicts(exercises.mutants(name)) == []


def test_a_students_halo_mistake_gets_the_advice_and_the_solution_none():
    """End to end: the student's own kernel (not the known-bad file) matches the signature of
    conv1d's halo_not_loaded.py; every student view shows the advice, none names the file."""
    result = graded_once(FILES / "advice" / "conv1d_no_halo.py", "conv1d")
    halo = known_bad.advice(exercises.folder("conv1d") / "mutants" / "halo_not_loaded.py")
    note = known_bad.ADVICE_NOTE + halo
    assert result.notes.count(note) == 1, (result.notes, [(t.name, t.status) for t in result.tests])
    shown = [parts.header(result, reveal_hidden=False),
             export.to_gradescope(result.to_dict())["output"]]
    for text in shown:
        assert note in text and "halo_not_loaded" not in text and "mutants" not in text
    fragment = html.render_part_fragment(result, "correctness", with_header=True)
    assert str(escape(note)) in fragment and "halo_not_loaded" not in fragment
    assert any("halo_not_loaded.py" in n for n in result.instructor_notes)
    solution = graded_once(exercises.solution_path("conv1d"), "conv1d")
    assert not [n for n in solution.notes if n.startswith(known_bad.ADVICE_NOTE)]


def test_check_fails_on_files_it_cannot_tell_apart(tmp_path, monkeypatch):
    """``autograder check``'s gradings step (its gradings stubbed: each row ok) fails on two
    known-bad files with one signature and two sentences, and names both."""
    from autograder.authoring import check, solutions

    files = [_file(tmp_path, f"{c}.py", "# kernelgrade-expect: correctness=failed\n"
                   f"# kernelgrade-advice: {c}.\n") for c in ("halo", "boundary")]
    monkeypatch.setattr(exercises, "mutants", lambda name: files)
    monkeypatch.setattr(solutions, "check_all", lambda names, device, jobs=1: [
        solutions.CheckRow("conv1d", p.name, "x", "y", True, 0.0, "sim") for p in files])
    step = check._gradings("conv1d", "sim", 1)
    assert step.ok is False and "halo.py and " in step.detail and "boundary.py" in step.detail
    files[1].write_text(files[1].read_text().replace("boundary.", "halo."), encoding="utf-8")
    assert check._gradings("conv1d", "sim", 1).ok is True
