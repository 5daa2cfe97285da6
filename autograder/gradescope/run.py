"""The bundle's grading step: ``python -m autograder.gradescope.run EXERCISE`` grades the
submission in ``<root>/submission`` into ``<root>/results/results.json``.

``<root>`` is ``/autograder`` on Gradescope, or ``$KERNELGRADE_GRADESCOPE_ROOT`` (``--root``).
The device is ``$KERNELGRADE_DEVICE`` (``--device``), default ``auto`` (Gradescope's machines
have no GPU: the simulator, and a provisional score that says so).

Exit status: 0 when the submission was graded, whatever the score (also when no submission file
was found: score 0 with a message for the student); 2 when the grader's own setup is at fault
(:class:`autograder.errors.GraderSetupError`, an unknown exercise, a bad device); 1 when the
grader crashed. In the last two cases results.json has no score and says the grader failed
(:func:`autograder.report.export.gradescope_grader_failure`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

from .. import exercises
from ..errors import GraderSetupError
from ..report import export

DEFAULT_ROOT = "/autograder"
ROOT_ENV = "KERNELGRADE_GRADESCOPE_ROOT"


def _candidates(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and p.suffix in (".py", ".ipynb")
                  and not any(part.startswith((".", "__"))
                              for part in p.relative_to(folder).parts))


def _names_exercise(path: Path, exercise: str) -> bool:
    # "06_grid_barrier.ipynb" names grid_barrier; "grid_barrier_lockfree.py" does not.
    return re.search(rf"(?<![a-z]){re.escape(exercise)}(?![a-z0-9_])", path.stem.lower()) \
        is not None


def find_submission(folder: Path, exercise: str) -> tuple[Path | None, str]:
    """The file to grade in Gradescope's submission ``folder`` (searched recursively; hidden
    folders, ``__MACOSX`` and ``.ipynb_checkpoints`` ignored), and, when there is none, why.

    One ``.py`` / ``.ipynb`` file is it. Among several, the ones whose name names the exercise
    (``tiled_matmul.ipynb``, ``01_tiled_matmul.py``) are preferred, then a single notebook, then
    a single ``.py`` file; anything still ambiguous is refused with the list of files.
    """
    found = _candidates(folder)
    if not found:
        others = sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
        listing = f" (it holds: {', '.join(others[:10])})" if others else " (it is empty)"
        return None, (f"No .py file or .ipynb notebook was found in your submission{listing}. "
                      f"Upload your notebook ({exercise}.ipynb) or a .py file that defines what "
                      "the exercise asks for.")
    pool = [p for p in found if _names_exercise(p, exercise)] or found
    for group in (pool, [p for p in pool if p.suffix == ".ipynb"],
                  [p for p in pool if p.suffix == ".py"]):
        if len(group) == 1:
            return group[0], ""
    names = ", ".join(str(p.relative_to(folder)) for p in pool)
    return None, (f"Your submission has several files that could be the {exercise} exercise "
                  f"({names}); submit only one .py file or .ipynb notebook, for instance "
                  f"{exercise}.ipynb.")


def _no_submission(exercise: str, message: str, seconds: float) -> dict:
    ex = exercises.get(exercise)
    return {
        "score": 0.0,
        "execution_time": int(round(seconds)),
        "output": message,
        "tests": [{"name": "submission file", "score": 0.0, "max_score": ex.max_score,
                   "status": "failed", "output": message, "visibility": "visible"}],
    }


def _write(root: Path, results: dict) -> Path:
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    tmp.replace(out)  # Gradescope never reads half a file
    return out


def run(root: Path, exercise: str, device: str = "auto") -> int:
    """Grade ``<root>/submission`` for ``exercise`` on ``device`` and write
    ``<root>/results/results.json``; return the exit status (see the module docstring). The
    console report goes to standard output (Gradescope's ``results/stdout``, shown to
    instructors)."""
    start = time.monotonic()
    try:
        if exercise not in exercises.names():
            raise GraderSetupError(str(exercises.UnknownExercise(exercise)))
        path, why = find_submission(root / "submission", exercise)
        if path is None:
            print(why)
            _write(root, _no_submission(exercise, why, time.monotonic() - start))
            return 0
        print(f"grading {path} for {exercise} on device {device}", flush=True)
        from ..grader import grade
        from ..report.console import print_result

        try:
            result = grade(path, exercise, device=device)
        except ValueError as exc:  # bad device or arguments: the bundle's configuration
            raise GraderSetupError(str(exc)) from exc
        _write(root, export.to_gradescope(result.to_dict(), time.monotonic() - start))
        print_result(result)
        return 0
    except GraderSetupError as exc:
        print(f"grader setup error: {exc}", file=sys.stderr)
        _write(root, export.gradescope_grader_failure(str(exc), time.monotonic() - start))
        return GraderSetupError.exit_code
    except Exception as exc:  # a crash of the grader itself: never the student's zero
        traceback.print_exc()
        _write(root, export.gradescope_grader_failure(
            f"the grader crashed: {type(exc).__name__}: {exc}", time.monotonic() - start))
        return 1


def check(exercise: str) -> int:
    """Setup-time check (setup.sh): the exercise exists and its instructor solution is found
    (``$KERNELGRADE_SOLUTIONS``: the bundle's ``solutions/``). Prints what it found; returns 0,
    or 2 with the cause."""
    from ..exercises import solution_path

    try:
        print(f"{exercise}: instructor solution {solution_path(exercises.get(exercise))}")
    except (exercises.UnknownExercise, FileNotFoundError) as exc:
        print(f"kernelgrade setup check failed: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line of ``run_autograder``: ``EXERCISE [--root DIR] [--device D] [--check]``."""
    ap = argparse.ArgumentParser(prog="python -m autograder.gradescope.run",
                                 description="Grade a Gradescope submission (run_autograder).")
    ap.add_argument("exercise")
    ap.add_argument("--root", type=Path, default=Path(os.environ.get(ROOT_ENV, DEFAULT_ROOT)),
                    help=f"Gradescope's root (default ${ROOT_ENV} or {DEFAULT_ROOT}).")
    ap.add_argument("--device", default=os.environ.get("KERNELGRADE_DEVICE", "auto"),
                    help="auto (GPU if there is one), gpu or sim.")
    ap.add_argument("--check", action="store_true",
                    help="Only check that the exercise and its solution are found.")
    args = ap.parse_args(argv)
    if args.check:
        return check(args.exercise)
    return run(args.root, args.exercise, args.device)


if __name__ == "__main__":
    sys.exit(main())
