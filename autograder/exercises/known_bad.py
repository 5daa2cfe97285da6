"""Known-bad submissions ("mutants") and the verdicts the grader must give them.

A mutant is a ``.py`` file in its exercise folder's ``mutants/`` (:mod:`autograder.exercises`) whose first comment lines say
what it must get::

    # kernelgrade-expect: concept=failed
    # kernelgrade-expect-gpu: timing=failed
    # kernelgrade-expect-sim: correctness=error

``KIND=STATUS`` means at least one test of that kind (or whose name contains KIND) ends with that
status. Plain ``expect`` lines hold on every backend, ``expect-gpu`` lines on a GPU only,
``expect-sim`` lines on the simulator only (which raises ``IndexError`` where a GPU silently reads
or writes out of bounds). Every mutant must also lose points.

A mutant may also carry the instructor's advice for a student who makes its mistake, on one or
more lines (joined with spaces)::

    # kernelgrade-advice: Load the halo: the first and last MAX_MASK_WIDTH // 2 threads of a
    # kernelgrade-advice: block also load the elements left and right of the block's tile.

Its expectations for the backend are then the mistake's failure signature: a student's result
that shows them all, with the same findings, reads the advice (:mod:`autograder.judge.advice`,
:data:`ADVICE_NOTE`), never the mutant's name.

A wheel and a Gradescope bundle never carry the known-bad files, so each exercise folder whose
mutants carry advice also holds their extract, :data:`ADVICE_FILE` (the advice and the
expectations, no code: :func:`extract`), which a kernelgrade without ``mutants/`` reads instead
(:func:`for_exercise`). ``python -m autograder.authoring.docs`` writes it for the built-in
exercises (``--check`` finds it stale), ``autograder gradescope build`` for a course's own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.wire.results import ExerciseResult

_EXPECT = re.compile(r"^#\s*kernelgrade-expect(?:-(gpu|sim))?:\s*(.+)$")
_ADVICE = re.compile(r"^#\s*kernelgrade-advice:\s*(.*)$")

#: How the advice of a known-bad file begins in a student's notes (``ExerciseResult.notes``).
ADVICE_NOTE = "Advice from your instructor: "


@dataclass(frozen=True)
class Expectation:
    """``selector`` (a test kind, or part of a test name) must include a test with ``status``;
    ``backend`` is ``"gpu"`` or ``"sim"`` for a verdict that holds on that backend only."""

    selector: str
    status: str
    backend: str | None = None

    def applies_to(self, device: str) -> bool:
        return self.backend is None or device.startswith(self.backend)

    def holds(self, result: ExerciseResult) -> bool:
        return any(
            (t.kind.value == self.selector or self.selector in t.name)
            and t.status.value == self.status
            for t in result.tests
        )

    def __str__(self) -> str:
        return f"{self.selector}={self.status}" + (f" ({self.backend})" if self.backend else "")


def _header(path: str | Path) -> list[str]:
    """The leading comment lines of ``path``, stripped (up to its first line of code or
    docstring; blank lines skipped)."""
    lines = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            break
        if line.strip():
            lines.append(line.strip())
    return lines


def expectations(path: str | Path) -> list[Expectation]:
    """Expectations declared in the leading comment lines of ``path``."""
    found = []
    for line in _header(path):
        m = _EXPECT.match(line)
        if m:
            for item in m.group(2).split(","):
                selector, _, status = item.strip().partition("=")
                found.append(Expectation(selector.strip(), status.strip(), m.group(1)))
    return found


def advice(path: str | Path) -> str:
    """The advice declared in the leading ``# kernelgrade-advice:`` lines of ``path``, joined
    with spaces; ``""`` for none."""
    parts = [m.group(1).strip() for m in map(_ADVICE.match, _header(path)) if m]
    return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Advised:
    """A known-bad file that carries advice: ``label`` names it for the instructor
    (``mutants/halo_not_loaded.py``), never for the student; ``expect``: its expectations, on
    every backend (:meth:`signature` picks a backend's)."""

    label: str
    advice: str
    expect: tuple[Expectation, ...]

    def signature(self, device: str) -> tuple[Expectation, ...]:
        """The expectations that apply on ``device`` (``"sim"``, ``"gpu:<name>"``): the
        mistake's failure signature there, sorted (equal signatures compare equal)."""
        return tuple(sorted({e for e in self.expect if e.applies_to(device)},
                            key=lambda e: (e.selector, e.status)))


def advised(paths: list[Path]) -> list[Advised]:
    """The known-bad files of ``paths`` that declare advice and an expectation (a file that
    cannot be read is left out: ``autograder check`` reads every one)."""
    found = []
    for path in paths:
        try:
            text, expect = advice(path), tuple(expectations(path))
        except (OSError, UnicodeDecodeError):
            continue
        if text and expect:
            found.append(Advised(f"{Path(path).parent.name}/{Path(path).name}", text, expect))
    return found


def advice_conflicts(paths: list[Path]) -> list[str]:
    """Pairs of known-bad files of ``paths`` whose signatures are equal on a backend but whose
    advice differs, a line each: a student whose result matches one matches the other, and
    which sentence is right cannot be told apart from the result."""
    found = []
    files = advised(paths)
    for i, a in enumerate(files):
        for b in files[i + 1:]:
            same = [words for device, words in (("sim", "the simulator"), ("gpu:", "a GPU"))
                    if a.signature(device) == b.signature(device)]
            if same and a.advice != b.advice:
                found.append(f"{a.label} and {b.label} have the same failure signature on "
                             f"{' and '.join(same)} but different advice: add an expectation "
                             "that tells them apart, or give them one sentence")
    return found


#: The extract of an exercise's advice (:func:`extract`), in its folder beside ``mutants/``.
ADVICE_FILE = "advice.json"
_ABOUT = ("The advice of this exercise's known-bad files (mutants/*.py: '# kernelgrade-advice:' "
          "and '# kernelgrade-expect:' lines), for a kernelgrade installed without them. "
          "Generated: edit those files, then run python -m autograder.authoring.docs "
          "(a course's own exercise: autograder gradescope build writes it).")


def extract(files: list[Advised]) -> str | None:
    """The text of :data:`ADVICE_FILE` for ``files`` (JSON: each file's label, advice and
    expectations as its header states them, ``"expect"``, ``"expect-gpu"``, ``"expect-sim"``:
    ``["concept=failed", ...]``; the same files give the same bytes), or ``None`` when there
    are none."""
    if not files:
        return None
    rows = []
    for f in files:
        row: dict[str, object] = {"file": f.label, "advice": f.advice}
        for backend in (None, "gpu", "sim"):
            said = [f"{e.selector}={e.status}" for e in f.expect if e.backend == backend]
            if said:
                row["expect" + (f"-{backend}" if backend else "")] = said
        rows.append(row)
    return json.dumps({"about": _ABOUT, "advice": rows}, indent=1, ensure_ascii=False) + "\n"


def read_extract(path: str | Path) -> list[Advised]:
    """The advised files an :data:`ADVICE_FILE` at ``path`` holds; ``[]`` when it is missing
    or not one (malformed JSON, a field of the wrong type): advice is never worth a failed
    grading, and ``python -m autograder.authoring.docs --check`` finds a built-in one stale."""
    try:
        found = []
        for row in json.loads(Path(path).read_text(encoding="utf-8"))["advice"]:
            expect = []
            for backend in (None, "gpu", "sim"):
                for item in row.get("expect" + (f"-{backend}" if backend else ""), []):
                    selector, _, status = str(item).partition("=")
                    expect.append(Expectation(selector.strip(), status.strip(), backend))
            if row["advice"] and expect:
                found.append(Advised(str(row["file"]), str(row["advice"]), tuple(expect)))
        return found
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return []


def for_exercise(folder: Path) -> list[Advised]:
    """The advised known-bad files of the exercise in ``folder``: read from its ``mutants/``
    where it has any (a checkout, a course's own folder), else from its :data:`ADVICE_FILE`
    (an installed kernelgrade, a Gradescope bundle); ``[]`` when neither is there."""
    from autograder.exercises import MUTANTS

    mutants = sorted((Path(folder) / MUTANTS).glob("*.py"))
    return advised(mutants) if mutants else read_extract(Path(folder) / ADVICE_FILE)


def unmet(path: str | Path, result: ExerciseResult) -> list[str]:
    """What ``result`` fails to show of the expectations of known-bad ``path`` (empty: all met)."""
    problems = [str(e) for e in expectations(path)
                if e.applies_to(result.device) and not e.holds(result)]
    if result.score >= result.max_score:
        problems.append("got full marks")
    if not expectations(path):
        problems.append("declares no '# kernelgrade-expect:' line")
    said = advice(path)
    if said and ADVICE_NOTE + said not in result.notes:
        problems.append("its '# kernelgrade-advice:' is not shown when it is graded (its "
                        "expectations and findings are its failure signature: name every "
                        "finding it gets; a more specific file's advice may win)")
    return problems


def full_marks_problems(result: ExerciseResult) -> list[str]:
    """Why an instructor solution's result is not full marks (skipped tests excepted)."""
    return [f"{t.name}: {t.status.value} ({t.message})" for t in result.tests
            if t.status.value not in ("passed", "skipped") or
            (t.status.value == "passed" and t.points < t.max_points)]
