"""``autograder mutants``: grade an exercise's one-edit mutants as a class and sort them.

The mutants (:func:`autograder.mutation.operators.mutants` of the instructor solution) are
written as a flat class folder, one ``<id>.py`` per mutant, and graded with
:func:`autograder.batch.run.run_batch` into a SQLite store (the exercise's preflight first, then
every mutant in its own child on the batch's workers). Each result gets a verdict:

``killed``      it lost points: a test failed, erred or timed out, or passed with fewer points;
``survived``    full marks, and not in the exercise's list of equivalent mutants: a blind spot
                of the hidden tests (or a missing entry in the list);
``equivalent``  it lost nothing, and it is listed (:mod:`autograder.mutation.equivalent`);
``not judged``  it lost nothing and is not listed, but some points were skipped (on the
                simulator: the timing test and the GPU-only sizes), so whether it survives is
                for a GPU to say (``strict``: a survivor);
``not graded``  the grader itself failed on it (batch stored nothing; a rerun retries it).

With ``out`` the mutant files, the store (``results.sqlite``) and a manifest of the mutants'
contents stay in that folder, and a rerun grades only what it has not graded yet: a stored
result whose mutant has changed since, or that was graded on the other device, is graded again.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .operators import Mutant

KILLED, SURVIVED, EQUIVALENT, NOT_JUDGED, NOT_GRADED = (
    "killed", "survived", "equivalent", "not judged", "not graded")
VERDICTS = (SURVIVED, NOT_GRADED, NOT_JUDGED, EQUIVALENT, KILLED)
#: Files that ``out`` holds besides the mutants.
STORE, MANIFEST = "results.sqlite", "manifest.json"


@dataclass
class Outcome:
    """A mutant and its verdict. ``why``: for ``killed`` the first test that lost points (name,
    status, message), for ``survived`` what (if anything) a diagnostic said, for ``not judged``
    the points the simulator skipped, for ``not graded`` the grader's error; ``reason``: the
    equivalence list's line for a listed mutant. Scores in points."""

    mutant: Mutant
    verdict: str
    why: str = ""
    reason: str | None = None
    score: float | None = None
    max_score: float | None = None
    pending_points: float = 0.0

    def to_dict(self) -> dict:
        return {"id": self.mutant.id, "operator": self.mutant.operator,
                "line": self.mutant.line, "description": self.mutant.description,
                "verdict": self.verdict, "why": self.why, "reason": self.reason,
                "score": self.score, "max_score": self.max_score,
                "pending_points": self.pending_points}


@dataclass
class Analysis:
    """What ``autograder mutants`` found for one exercise. ``warnings``: listed equivalent
    mutants that no longer exist or were killed."""

    exercise: str
    device: str
    outcomes: list[Outcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(o.verdict == verdict for o in self.outcomes)

    @property
    def failed(self) -> bool:
        """True when a survivor is not listed as equivalent or a mutant was not graded."""
        return bool(self.count(SURVIVED) or self.count(NOT_GRADED))

    def summary(self) -> str:
        parts = [f"{self.count(v)} {v}" for v in VERDICTS if self.count(v)]
        return f"{len(self.outcomes)} mutants of {self.exercise}: {', '.join(parts) or 'none'}"

    def to_dict(self) -> dict:
        return {"exercise": self.exercise, "device": self.device,
                "counts": {v: self.count(v) for v in VERDICTS},
                "unlisted_survivors": [o.mutant.id for o in self.outcomes
                                       if o.verdict == SURVIVED],
                "warnings": list(self.warnings),
                "mutants": [o.to_dict() for o in self.outcomes]}


def classify(result: dict) -> tuple[str, str]:
    """(verdict, why) of one graded mutant (``ExerciseResult.to_dict()``), not counting the
    equivalence list: ``killed``, ``survived`` or ``not judged``."""
    tests = result.get("tests", [])
    for t in tests:
        lost = t["status"] != "skipped" and t["points"] < t["max_points"]
        if lost or (t["status"] in ("failed", "error", "timeout") and t["max_points"] > 0):
            return KILLED, _one_line(f"{t['name']}: {t['status']} ({t.get('message', '')})")
    pending = sum(t["max_points"] for t in tests if t["status"] == "skipped")
    if pending > 0:
        return NOT_JUDGED, f"lost nothing graded here; {pending:g} points skipped (need a GPU)"
    flagged = [t for t in tests if t["status"] != "passed" and t["status"] != "skipped"]
    if flagged:
        return SURVIVED, _one_line("full marks; " + "; ".join(
            f"{t['name']}: {t['status']} ({t.get('message', '')})" for t in flagged))
    return SURVIVED, "full marks"


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _forget_stale(folder: Path, chosen: list[Mutant], backend: str) -> None:
    """In a kept ``out`` folder: drop the stored results of mutants whose source changed since
    they were graded, or that were graded on the other device, and record the new contents."""
    from autograder.batch.store import ResultStore

    manifest_path = folder / MANIFEST
    try:
        old = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    store = ResultStore(folder / STORE)
    try:
        for row in store.rows():
            mutant_id = row["student"]
            current = next((m for m in chosen if m.id == mutant_id), None)
            stale = (current is not None and old.get(mutant_id) != _digest(current.source)) \
                or not row["device"].startswith(backend)
            if stale:
                store.db.execute("DELETE FROM results WHERE key = ?", (row["key"],))
    finally:
        store.close()
    old.update({m.id: _digest(m.source) for m in chosen})
    manifest_path.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def grade(exercise: str, chosen: list[Mutant], device: str = "auto",
          workers: int | None = None, sanitize: bool = True, out: Path | None = None,
          progress: bool = False) -> tuple[dict[str, dict], dict[str, str]]:
    """Grade ``chosen`` with :func:`autograder.batch.run.run_batch`; returns (mutant id -> result
    dict, mutant id -> why the grader failed on it). ``out``: a folder that keeps the mutant
    files and the store (a rerun resumes); None: a temporary one. Raises what ``run_batch``
    raises (``ValueError``, :class:`autograder.errors.GraderSetupError`)."""
    from autograder.batch.run import run_batch
    from autograder.grading.devices import resolve_device

    backend = resolve_device(device)
    with tempfile.TemporaryDirectory(prefix="kernelgrade-mutants-") as tmp:
        work = Path(tmp)
        folder = out if out is not None else work
        folder.mkdir(parents=True, exist_ok=True)
        if out is not None:
            _forget_stale(out, chosen, backend)
        klass = work / "class"
        klass.mkdir()
        for m in chosen:
            (klass / f"{m.id}.py").write_text(m.source, encoding="utf-8")
            if out is not None:
                (out / f"{m.id}.py").write_text(m.source, encoding="utf-8")
        store, failures = run_batch(klass, folder / STORE, exercise, device, workers,
                                    progress=progress, sanitize=sanitize)
        try:
            results = {row["student"]: row["result"] for row in store.rows()}
        finally:
            store.close()
    errors = {}
    for failure in failures:  # "<id>/<exercise>: why"
        key, _, why = failure.partition(": ")
        errors[key.split("/")[0]] = why
    return results, errors


def analyse(exercise: str, chosen: list[Mutant], listed: dict[str, str],
            results: dict[str, dict], errors: dict[str, str], device: str,
            every_id: set[str] | None = None, strict: bool = False) -> Analysis:
    """The verdicts of ``chosen`` from their ``results`` and the grader's ``errors``, against
    ``listed`` (id -> reason). ``every_id``: the ids of all the solution's mutants, whatever
    operators were chosen (a listed id outside it no longer exists); None: those of
    ``chosen``. ``strict``: an unlisted mutant that lost nothing is a survivor even when some
    points were skipped (a simulator run as a gate)."""
    analysis = Analysis(exercise, device)
    known = every_id if every_id is not None else {m.id for m in chosen}
    for mutant_id in sorted(set(listed) - known):
        analysis.warnings.append(f"{mutant_id} is listed as equivalent but is no longer a "
                                 "mutant of the solution (its line moved or changed?)")
    for m in chosen:
        reason = listed.get(m.id)
        if m.id in errors or m.id not in results:
            analysis.outcomes.append(Outcome(m, NOT_GRADED, _one_line(
                errors.get(m.id, "no result stored")), reason))
            continue
        result = results[m.id]
        verdict, why = classify(result)
        if verdict in (SURVIVED, NOT_JUDGED) and reason is not None:
            verdict = EQUIVALENT
        elif verdict == NOT_JUDGED and strict:
            verdict = SURVIVED
        if verdict == KILLED and reason is not None:
            analysis.warnings.append(f"{m.id} is listed as equivalent but was killed: {why}")
        analysis.outcomes.append(Outcome(m, verdict, why, reason, result.get("score"),
                                         result.get("max_score"),
                                         result.get("pending_points", 0.0)))
    return analysis
