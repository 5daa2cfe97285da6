"""The instructor's advice for a known mistake: a student's result that matches the failure
signature of a known-bad file with a ``# kernelgrade-advice:`` line gets its sentence.

A known-bad file's **signature** on a backend is what its expectations there declare
(:meth:`autograder.exercises.known_bad.Advised.signature`): which tests end how
(``correctness=failed``, ``concept=passed``, ``diagnostic: shared-memory races=failed``). A
result **matches** it when

- it lost something (a test ended ``failed``, ``error`` or ``timeout``);
- every expectation of the signature holds (:meth:`Expectation.holds`);
- the findings agree: every diagnostic that failed (a race, a divergent barrier, an
  out-of-bounds access, a read of unwritten shared memory, bank conflicts) is one the signature
  names as failed (``diagnostic=failed`` names them all). A student whose kernel also races is
  not told only how to load a halo.

Everything is read off the result's tests (kinds, names, statuses), never the source. Of the
files that match, the most specific win (the most expectations); their advice, at most
:data:`MAX_SHOWN` distinct sentences, goes into the student's notes once each as
``"Advice from your instructor: ..."`` (:data:`autograder.exercises.known_bad.ADVICE_NOTE`),
which every student-facing view shows (console, HTML, nbgrader grade cells, Gradescope's
``output``). Which file matched is the instructor's note only. Pure: no file, no process.
"""

from __future__ import annotations

from autograder.exercises.known_bad import ADVICE_NOTE, Advised, Expectation
from autograder.wire.results import ExerciseResult, Kind, Status

#: Distinct advice sentences shown at most (tied, most specific matches).
MAX_SHOWN = 2

_LOST = (Status.FAILED, Status.ERROR, Status.TIMEOUT)
_LOST_WORDS = {s.value for s in _LOST}


def findings(result: ExerciseResult) -> list[str]:
    """The names of the diagnostic tests of ``result`` that did not pass (its findings'
    kinds: ``diagnostic: shared-memory races``, ``diagnostic: boundary checks``, ...)."""
    return [t.name for t in result.tests if t.kind is Kind.DIAGNOSTIC and t.status in _LOST]


def _names(e: Expectation, finding: str) -> bool:
    return e.status in _LOST_WORDS and (e.selector == Kind.DIAGNOSTIC.value
                                        or e.selector in finding)


def matches(signature: tuple[Expectation, ...] | list[Expectation],
            result: ExerciseResult) -> bool:
    """True when ``result`` shows the failure ``signature`` (the expectations of a known-bad
    file on ``result``'s backend): it lost something, every expectation holds, and each of its
    failed diagnostics is named by one of them. An empty signature matches nothing."""
    if not signature or not any(t.status in _LOST for t in result.tests):
        return False
    if not all(e.holds(result) for e in signature):
        return False
    return all(any(_names(e, f) for e in signature) for f in findings(result))


def choose(files: list[Advised], result: ExerciseResult) -> list[Advised]:
    """The files of ``files`` whose signature on ``result.device`` it matches and that no
    other match outdoes in specificity (the number of expectations), in the order given, one
    per distinct advice, at most :data:`MAX_SHOWN`."""
    matched = [(len(f.signature(result.device)), f) for f in files
               if matches(f.signature(result.device), result)]
    if not matched:
        return []
    best = max(n for n, _ in matched)
    chosen: dict[str, Advised] = {}
    for n, f in matched:
        if n == best and f.advice not in chosen:
            chosen[f.advice] = f
    return list(chosen.values())[:MAX_SHOWN]


def apply(result: ExerciseResult, files: list[Advised]) -> list[Advised]:
    """Add the advice of :func:`choose` to ``result.notes`` (once each, never the file's name)
    and which file gave it to ``result.instructor_notes``; returns the chosen files."""
    chosen = choose(files, result)
    for f in chosen:
        note = ADVICE_NOTE + f.advice
        if note not in result.notes:
            result.notes.append(note)
        result.instructor_notes.append(f"advice shown: the result matches the failure "
                                       f"signature of {f.label}")
    return chosen
