"""``autograder gradescope build EXERCISE --out autograder.zip``: the zip that Gradescope's
autograder specification asks for, for one exercise.

At the zip's root:

- ``setup.sh``: run once, as root, when Gradescope builds the image. Finds (or installs with
  apt) a Python >= 3.11, makes a virtual environment at ``$ROOT/venv``, installs the pinned
  dependencies (named in the script, from pyproject.toml) and then the kernelgrade wheel
  without dependencies, installs bubblewrap if apt can (the optional sandbox), and checks that
  the exercise and its instructor solution are installed.
- ``run_autograder``: run for every submission; grades ``$ROOT/submission`` into
  ``$ROOT/results/results.json`` with ``python -m autograder.gradescope.run``. When the
  virtual environment is missing it still writes a results.json saying the grader failed.
- ``kernelgrade-<version>-py3-none-any.whl``: the package with its instructor solutions (the
  bundle is the instructor's; students never see it), see :mod:`autograder.gradescope.wheel`.
- ``README.md``: the same, for the instructor.

``$ROOT`` is ``$KERNELGRADE_GRADESCOPE_ROOT``, default ``/autograder``; ``run_autograder``
uses ``$KERNELGRADE_GRADESCOPE_PYTHON`` instead of ``$ROOT/venv/bin/python`` when it is set.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import zipfile
from pathlib import Path

from .. import exercises
from ..report.export import gradescope_grader_failure
from .run import ROOT_ENV
from .wheel import build_wheel, project

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
# The pinned dependencies of kernelgrade {version} (its pyproject.toml).
"$VENV/bin/python" -m pip install \
{requirements}
"$VENV/bin/python" -m pip install --no-deps "$SOURCE/{wheel}"
"$VENV/bin/python" -m autograder.gradescope.run {exercise} --check
"""

_RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: grade $ROOT/submission for {exercise} into
# $ROOT/results/results.json. Exit status 0: graded (whatever the score); 2: the grader's own
# setup is at fault (results.json then has no score and says so); 1: the grader crashed.
ROOT="${{{root_env}:-/autograder}}"
PY="${{{python_env}:-$ROOT/venv/bin/python}}"
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
Python >= 3.11, the pinned dependencies and the kernelgrade wheel in `/autograder/venv`), then
`run_autograder` for every submission.

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


def _requirements(reqs: tuple[str, ...]) -> str:
    return " \\\n".join(f"    {shlex.quote(r)}" for r in reqs)


def render(exercise: str, wheel_name: str) -> dict[str, str]:
    """The text files of the bundle for ``exercise``: ``setup.sh``, ``run_autograder`` and
    ``README.md``. Raises :class:`autograder.exercises.UnknownExercise`."""
    exercises.get(exercise)
    p = project()
    missing = json.dumps(gradescope_grader_failure(
        "kernelgrade is not installed in the autograder image (setup.sh failed?)", 0), indent=2)
    fields = dict(exercise=exercise, version=p.version, root_env=ROOT_ENV,
                  python_env=PYTHON_ENV, wheel=wheel_name, major=MIN_PYTHON[0],
                  minor=MIN_PYTHON[1], requirements=_requirements(p.requires), missing=missing)
    return {"setup.sh": _SETUP.format(**fields), "run_autograder": _RUN.format(**fields),
            "README.md": _README.format(**fields)}


def build_bundle(exercise: str, out: Path) -> Path:
    """Write the Gradescope autograder zip for ``exercise`` to ``out`` and return it.
    Raises :class:`autograder.exercises.UnknownExercise`, and ``LookupError`` /
    ``FileNotFoundError`` when this kernelgrade has no metadata or no solutions to pack."""
    exercises.get(exercise)
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        texts = render(exercise, wheel.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in texts.items():
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.external_attr = (0o755 if name != "README.md" else 0o644) << 16
                z.writestr(entry, text, zipfile.ZIP_DEFLATED)
            entry = zipfile.ZipInfo(wheel.name, _EPOCH)
            entry.external_attr = 0o644 << 16
            z.writestr(entry, wheel.read_bytes(), zipfile.ZIP_DEFLATED)
    return out
