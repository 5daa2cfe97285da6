"""Regenerate the example class, examples/submitted/<student>/<assignment>/<notebook>.ipynb, from
the manifest examples/class.json.

    python examples/make_class.py            # rewrite examples/submitted
    python examples/make_class.py --check    # exit 1 if examples/submitted is stale

The manifest maps student → assignment (``01_tiled_matmul``) → ``{"from": ..., "what": ...}``:
``"from"`` is ``"solution"`` (the exercise's instructor solution) or ``"mutants/<file>.py"`` (one
of its known-bad submissions, in ``assignments/<name>/mutants/``);
``"what"`` says in words what the student got right or wrong. The class holds nothing else: to
show another mistake, add a mutant to the exercise's folder and name it here.

Each student notebook is the *release* notebook of its assignment (``autograder course build``,
then nbgrader's ``generate_assignment``: solutions and hidden tests gone) with that file's code,
its module docstring and ``# kernelgrade-expect`` lines left out, in the solution cell: the way a
student hands it in, without outputs. Needs nbgrader (``.[nbgrader]``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.nbgrader import notebook as nbb  # noqa: E402
from autograder.nbgrader.authoring import notebook_file  # noqa: E402
from autograder.nbgrader.course import build_course  # noqa: E402

EXAMPLES = ROOT / "examples"
OUT = EXAMPLES / "submitted"
MANIFEST = EXAMPLES / "class.json"
SOLUTION = "solution"
EXPECT_PREFIX = "# kernelgrade-expect"


def load_manifest(path: Path = MANIFEST) -> dict[str, dict[str, dict]]:
    """The class: ``{student: {assignment: {"from": ..., "what": ...}}}`` (see the module
    docstring). Raises ``ValueError`` for an entry without ``from`` or ``what``."""
    manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    for student, work in manifest.items():
        for assignment, entry in work.items():
            if not {"from", "what"} <= set(entry):
                raise ValueError(f"{path}: {student}/{assignment} needs 'from' and 'what'")
    return manifest


def exercise_of(assignment: str):
    """The exercise whose nbgrader assignment is ``assignment`` (``EXERCISE.assignment``).
    Raises ``ValueError`` when none is."""
    for ex in exercises.all_exercises():
        if ex.assignment == assignment:
            return ex
    known = ", ".join(ex.assignment for ex in exercises.all_exercises())
    raise ValueError(f"no exercise is assignment {assignment!r}; known: {known}")


def submission_file(exercise: str, source: str) -> Path:
    """The file a manifest's ``"from"`` names for ``exercise``: its instructor solution for
    ``"solution"``, else ``mutants/<file>.py`` of its folder. Raises ``ValueError`` for anything
    else or a file that does not exist."""
    if source == SOLUTION:
        return exercises.solution_path(exercise)
    path = exercises.folder(exercise) / source
    if Path(source).parent.name != exercises.MUTANTS or path not in exercises.mutants(exercise):
        mutants = ", ".join(f"mutants/{p.name}" for p in exercises.mutants(exercise))
        raise ValueError(f"{exercise}: {source!r} is neither 'solution' nor one of its mutants "
                         f"({mutants})")
    return path


def submission_code(path: Path) -> str:
    """The code a student would hand in from ``path``: without the module docstring and the
    ``# kernelgrade-expect`` lines."""
    text = nbb.strip_module_docstring(path.read_text(encoding="utf-8"))
    lines = [ln for ln in text.splitlines() if not ln.startswith(EXPECT_PREFIX)]
    return "\n".join(lines).strip("\n") + "\n"


def student_code(student: str, assignment: str, manifest: dict | None = None) -> str:
    """The code ``student`` put in the solution cell of ``assignment``, per the manifest."""
    entry = (manifest or load_manifest())[student][assignment]
    return submission_code(submission_file(exercise_of(assignment).name, entry["from"]))


def release_notebooks(workdir: Path, assignments) -> dict[str, tuple[str, object]]:
    """``{assignment: (notebook file name, release notebook)}`` for ``assignments``, made by
    ``nbgrader generate_assignment`` in a course built under ``workdir``. Raises
    ``RuntimeError`` when nbgrader fails."""
    names = [exercise_of(a).name for a in assignments]
    course = build_course(workdir / "course", names=names, device="sim")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    found = {}
    for assignment, name in zip(assignments, names):
        run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment",
                              assignment, "--log-level=WARN"],
                             cwd=course, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"nbgrader generate_assignment {assignment} failed:\n"
                               f"{run.stderr}")
        path = course / "release" / assignment / notebook_file(name)
        found[assignment] = (path.name, nbb.read(path))
    return found


def student_notebook(release, code: str):
    """A copy of ``release`` with ``code`` as the source of its solution cell."""
    nb = nbb.nbformat.from_dict(json.loads(nbb.dumps(release)))  # deep copy
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = code.strip("\n")
    return nb


def class_files(releases: dict[str, tuple[str, object]],
                manifest: dict | None = None) -> dict[Path, str]:
    """``{path relative to examples/: notebook text}`` of the whole class, from the release
    notebooks (as :func:`release_notebooks` returns them) and the manifest."""
    manifest = manifest or load_manifest()
    files: dict[Path, str] = {}
    for student, work in manifest.items():
        for assignment in work:
            nb_name, release = releases[assignment]
            code = student_code(student, assignment, manifest)
            files[Path("submitted") / student / assignment / nb_name] = nbb.dumps(
                student_notebook(release, code))
    return files


def class_assignments(manifest: dict | None = None) -> list[str]:
    """The assignments the class hands in, in course order."""
    manifest = manifest or load_manifest()
    wanted = {a for work in manifest.values() for a in work}
    return [ex.assignment for ex in exercises.all_exercises() if ex.assignment in wanted]


def make_class(workdir: Path) -> dict[Path, str]:
    """The class's files (see :func:`class_files`), with release notebooks made in ``workdir``."""
    manifest = load_manifest()
    return class_files(release_notebooks(workdir, class_assignments(manifest)), manifest)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    with tempfile.TemporaryDirectory(prefix="kernelgrade-class-") as tmp:
        files = make_class(Path(tmp))
    extra = [p.relative_to(EXAMPLES) for p in OUT.rglob("*.ipynb")
             if p.relative_to(EXAMPLES) not in files]
    if check:
        stale = [str(p) for p, text in files.items()
                 if not (EXAMPLES / p).exists()
                 or (EXAMPLES / p).read_text(encoding="utf-8") != text]
        stale += [f"{p} (not in class.json)" for p in extra]
        if stale:
            print("stale (run python examples/make_class.py):", ", ".join(stale))
            return 1
        return 0
    for p in extra:
        (EXAMPLES / p).unlink()
        print(f"removed examples/{p} (not in class.json)")
    for p, text in files.items():
        (EXAMPLES / p).parent.mkdir(parents=True, exist_ok=True)
        (EXAMPLES / p).write_text(text, encoding="utf-8")
        print(f"wrote examples/{p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
