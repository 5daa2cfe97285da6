"""An instructor with an installed kernelgrade builds an nbgrader course of their own exercise
(issue 32, item 14): ``autograder new``, then ``autograder course build --exercise NAME`` with
the course's own ``--assignments`` and ``--solutions``, run from a wheel installed into a fresh
venv (not editable, no checkout on the path), outside the checkout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from autograder import exercises

NAME = "stencil_own"


def _env() -> dict:
    # an installed user's environment: no checkout on the path, no solutions folder
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", exercises.SOLUTIONS_ENV, exercises.ASSIGNMENTS_ENV)}


def _cli(python: str, where: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "autograder.cli", *args], cwd=where, env=_env(),
                          capture_output=True, text=True, timeout=600)


def test_course_build_of_an_own_exercise_from_an_installed_kernelgrade(gradescope_python,
                                                                      tmp_path):
    python = gradescope_python
    where = subprocess.run([python, "-c", "import autograder; print(autograder.__file__)"],
                           cwd=tmp_path, env=_env(), capture_output=True, text=True)
    assert "site-packages" in where.stdout, where.stdout + where.stderr  # the wheel's copy
    own = tmp_path / "mycourse" / "assignments"
    made = _cli(python, tmp_path, "new", NAME, "--assignments", str(own))
    assert made.returncode == 0, made.stdout + made.stderr
    solutions = tmp_path / "mycourse" / "solutions"
    assert (solutions / f"{NAME}.py").is_file()

    # every exercise known: the built-in ones have no solution here; the message says how to
    # choose the course's exercises
    every = _cli(python, tmp_path, "course", "build", str(tmp_path / "all"),
                 "--assignments", str(own), "--solutions", str(solutions))
    assert every.returncode == 2 and "--exercise NAME" in every.stderr, every.stderr
    assert not (tmp_path / "all" / "source").exists()

    course = tmp_path / "nb"
    built = _cli(python, tmp_path, "course", "build", str(course), "--exercise", NAME,
                 "--assignments", str(own), "--solutions", str(solutions),
                 "--device", "sim", "--allow-provisional")
    assert built.returncode == 0, built.stdout + built.stderr
    (assignment,) = [p.name for p in (course / "source").iterdir()]
    assert assignment.endswith(NAME) and f"nbgrader generate_assignment {assignment}" in \
        built.stdout
    nb = json.loads((course / "source" / assignment / f"{NAME}.ipynb").read_text())
    assert nb["cells"]
    assert (course / "instructor" / "solutions" / f"{NAME}.py").is_file()
    assert (course / "instructor" / "assignments" / NAME / "exercise.py").is_file()
    readme = (course / "README.md").read_text()
    assert "pip install -e" not in readme
    assert f"--exercise {NAME}" in readme and "--force" in readme  # how to rebuild it
    config = (course / "nbgrader_config.py").read_text()
    assert "instructor" in config and "KERNELGRADE_ASSIGNMENTS" in config

    # the README's rebuild command works from anywhere, and keeps the class's seed
    seed = (course / "instructor" / "class_seed").read_text()
    line = next(ln for ln in readme.splitlines() if "--force" in ln).strip().strip("`")
    args = line.split()[1:]  # shlex-quoted paths hold no spaces here
    assert args[:2] == ["course", "build"]
    assert args[args.index("--assignments") + 1] == str(own.resolve())  # the course's own
    assert args[args.index("--solutions") + 1] == str(solutions.resolve())
    (own / NAME / "notebook.py").write_text((own / NAME / "notebook.py").read_text()
                                           + "\n# %% [markdown]\n# One more hint.\n")
    again = _cli(python, tmp_path / "mycourse", *args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (course / "instructor" / "class_seed").read_text() == seed
    assert "One more hint." in (course / "source" / assignment / f"{NAME}.ipynb").read_text()
