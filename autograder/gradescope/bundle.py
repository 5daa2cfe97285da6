"""``autograder gradescope build EXERCISE --out autograder.zip``: the zip that Gradescope's
autograder specification asks for, for one exercise.

At the zip's root:

- ``setup.sh``: run once, as root, when Gradescope builds the image. Finds (or installs with
  apt) a Python >= 3.11, makes a virtual environment at ``$ROOT/venv``, installs the
  dependencies at the exact versions the instructor's grader runs (:func:`pinned`: named in
  the script) and then the kernelgrade wheel without dependencies, installs bubblewrap if apt
  can (the optional sandbox), and checks that the exercise and its instructor solution are
  found.
- ``run_autograder``: run for every submission; points ``$KERNELGRADE_SOLUTIONS`` at the
  bundle's ``solutions/`` (``$ROOT/source/solutions``, where Gradescope unpacks the zip) and
  grades ``$ROOT/submission`` into ``$ROOT/results/results.json`` with
  ``python -m autograder.gradescope.run``. When the virtual environment is missing it still
  writes a results.json saying the grader failed.
- ``kernelgrade-<version>-py3-none-any.whl``: the package, without instructor solutions (as a
  student's install), see :mod:`autograder.gradescope.wheel`.
- ``solutions/<exercise>/solution.py``: the exercise's instructor solution (the grader's
  preflight and timing reference). The bundle is the instructor's; students never see it, and
  under bubblewrap the grading children do not see ``$ROOT/source``.
- ``README.md``: the same, for the instructor.

``$ROOT`` is ``$KERNELGRADE_GRADESCOPE_ROOT``, default ``/autograder``; ``run_autograder``
uses ``$KERNELGRADE_GRADESCOPE_PYTHON`` instead of ``$ROOT/venv/bin/python`` when it is set.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import tempfile
import zipfile
from pathlib import Path

from .. import exercises
from ..report.export import gradescope_grader_failure
from .run import ROOT_ENV
from .wheel import build_wheel, project, solution_files

PYTHON_ENV = "KERNELGRADE_GRADESCOPE_PYTHON"
# numpy 2.4 (pinned in pyproject.toml) needs Python 3.11 or newer.
MIN_PYTHON = (3, 11)
_EPOCH = (1980, 1, 1, 0, 0, 0)

_SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu).
# It installs kernelgrade {version} for the exercise {exercise} into $ROOT/venv.
set -euo pipefail
ROOT="${{{root_env}:-/autograder}}"
SOURCE="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
VENV="$ROOT/venv"
export DEBIAN_FRONTEND=noninteractive

find_python() {{
    local py
    for py in python3.13 python3.12 python3.11 python3; do
        if command -v "$py" >/dev/null 2>&1 &&
            "$py" -c 'import sys; sys.exit(sys.version_info[:2] < ({major}, {minor}))'; then
            command -v "$py"
            return 0
        fi
    done
    return 1
}}

PY="$(find_python || true)"
if [ -z "$PY" ]; then
    # Ubuntu 22.04 (Gradescope's default image) has Python 3.10: take 3.11 from deadsnakes.
    apt-get update
    apt-get install -y software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y python3.11 python3.11-venv
    PY="$(find_python)"
fi
if ! "$PY" -m venv "$VENV"; then
    apt-get install -y "$(basename "$PY")-venv"
    "$PY" -m venv "$VENV"
fi
# bubblewrap is the optional sandbox (README, "Sandbox"); without it the grader uses plain
# child processes and says so in every result.
apt-get install -y bubblewrap || echo "setup.sh: bubblewrap not installed"

"$VENV/bin/python" -m pip install --upgrade pip
# kernelgrade {version}'s dependencies, at the versions of the grader that built this bundle.
"$VENV/bin/python" -m pip install \
{requirements}
"$VENV/bin/python" -m pip install --no-deps "$SOURCE/{wheel}"
{solutions_env}="$SOURCE/solutions" "$VENV/bin/python" -m autograder.gradescope.run {exercise} --check
"""

_RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: grade $ROOT/submission for {exercise} into
# $ROOT/results/results.json. Exit status 0: graded (whatever the score); 2: the grader's own
# setup is at fault (results.json then has no score and says so); 1: the grader crashed.
ROOT="${{{root_env}:-/autograder}}"
PY="${{{python_env}:-$ROOT/venv/bin/python}}"
# The instructor solution travels beside the wheel, never inside it (Gradescope unpacks the
# zip into $ROOT/source).
export {solutions_env}="$ROOT/source/solutions"
if ! "$PY" -c 'import autograder.gradescope.run' >/dev/null 2>&1; then
    echo "kernelgrade is not installed for $PY: did setup.sh fail?" >&2
    mkdir -p "$ROOT/results"
    cat > "$ROOT/results/results.json" <<'KERNELGRADE_JSON'
{missing}
KERNELGRADE_JSON
    exit 2
fi
exec "$PY" -m autograder.gradescope.run {exercise} --root "$ROOT"
"""

_README = """# Gradescope autograder for `{exercise}` (kernelgrade {version})

Made by `autograder gradescope build {exercise}`. Upload this zip as the assignment's
autograder (Configure Autograder, Ubuntu base image). Gradescope runs `setup.sh` once (installs
Python >= 3.11, the dependencies at the versions of the grader that built the zip and the
kernelgrade wheel in `/autograder/venv`), then `run_autograder` for every submission.

- The wheel holds no instructor solution (it is what students install); the solution is in
  `solutions/{exercise}/solution.py`, which `run_autograder` names in `$KERNELGRADE_SOLUTIONS`.

- The submission is the `.py` file or `.ipynb` notebook in `/autograder/submission`; with
  several, the one named after the exercise (`{exercise}.ipynb`). None: score 0 and a message.
- Gradescope has no GPU: grading runs on the Numba CUDA simulator, where the timing test and
  the largest sizes cannot run. Those tests are left out of the test list, and the output says
  "provisional: N points need a GPU": regrade on a GPU (`autograder grade --device gpu`) for
  the final score.
- If the grader's own setup fails (not the student's code), results.json has no score, says
  the grader failed and that this is not the student's score, and `run_autograder` exits
  non-zero. Fix the setup and use "Regrade All Submissions". The cause is in the submission's
  autograder output (stdout, instructors only).
"""


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")


def pinned(requirement: str) -> str:
    """``requirement`` (``"numba-cuda[cu13]~=0.30.4"``) pinned to the version installed here
    (``"numba-cuda[cu13]==0.30.4"``), so Gradescope grades with the versions the instructor's
    grader was tested with; unchanged when it is not installed here."""
    m = _REQUIREMENT.match(requirement)
    if not m:
        return requirement
    try:
        version = importlib.metadata.version(m.group(1))
    except importlib.metadata.PackageNotFoundError:
        return requirement
    return f"{m.group(1)}{m.group(2) or ''}=={version}"


def _requirements(reqs: tuple[str, ...]) -> str:
    return " \\\n".join(f"    {shlex.quote(pinned(r))}" for r in reqs)


def render(exercise: str, wheel_name: str) -> dict[str, str]:
    """The text files of the bundle for ``exercise``: ``setup.sh``, ``run_autograder`` and
    ``README.md``. Raises :class:`autograder.exercises.UnknownExercise`."""
    exercises.get(exercise)
    p = project()
    missing = json.dumps(gradescope_grader_failure(
        "kernelgrade is not installed in the autograder image (setup.sh failed?)", 0), indent=2)
    fields = dict(exercise=exercise, version=p.version, root_env=ROOT_ENV,
                  python_env=PYTHON_ENV, solutions_env=exercises.SOLUTIONS_ENV,
                  wheel=wheel_name, major=MIN_PYTHON[0],
                  minor=MIN_PYTHON[1], requirements=_requirements(p.requires), missing=missing)
    return {"setup.sh": _SETUP.format(**fields), "run_autograder": _RUN.format(**fields),
            "README.md": _README.format(**fields)}


def build_bundle(exercise: str, out: Path) -> Path:
    """Write the Gradescope autograder zip for ``exercise`` to ``out`` and return it.
    Raises :class:`autograder.exercises.UnknownExercise`, ``LookupError`` when this kernelgrade
    has no metadata, and ``FileNotFoundError`` when the exercise's instructor solution is not
    found (an installed kernelgrade: set ``$KERNELGRADE_SOLUTIONS`` or ``--solutions``)."""
    exercises.get(exercise)
    out = Path(out)
    solutions = solution_files(exercise)  # before anything is written
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        texts = render(exercise, wheel.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in texts.items():
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.external_attr = (0o755 if name != "README.md" else 0o644) << 16
                z.writestr(entry, text, zipfile.ZIP_DEFLATED)
            for name, data in {wheel.name: wheel.read_bytes(), **solutions}.items():
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.external_attr = 0o644 << 16
                z.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return out
