"""``autograder gradescope build EXERCISE --out autograder.zip``: the zip that Gradescope's
autograder specification asks for, for one exercise (docs/gradescope.md says how to use it).

At the zip's root:

- ``setup.sh``: run once, as root, when Gradescope builds the image. ``apt-get update``, then
  finds (or installs with apt) a Python >= 3.11, installs bubblewrap (the sandbox: required),
  makes a virtual environment at ``$ROOT/venv``, installs kernelgrade's dependencies with
  ``requirements-lock.txt`` as pip constraints (every package, direct or not, at the version
  the project tested: :mod:`autograder.gradescope.lock`) and the kernelgrade wheel without
  dependencies, then ``python -m autograder.gradescope.run EXERCISE --setup``: locks the
  solutions and passes the preflight once, remembered in ``$ROOT/cache`` for every submission.
- ``run_autograder``: run for every submission; grades ``$ROOT/submission`` into
  ``$ROOT/results/results.json`` with ``python -m autograder.gradescope.run`` (a sandbox
  required: :mod:`autograder.gradescope.run`). It always leaves a results.json: when the
  virtual environment is missing or Python dies without writing one, one saying the grader
  failed, with no score.
- ``kernelgrade-<version>-py3-none-any.whl``: the package, without instructor solutions (as a
  student's install), see :mod:`autograder.gradescope.wheel`.
- ``requirements-lock.txt``: the exact versions (:func:`autograder.gradescope.lock.lock_text`).
- ``solutions/<exercise>/solution.py``: the exercise's instructor solution (the grader's
  preflight and timing reference). The bundle is the instructor's; students never see it; the
  grading children do not see ``$ROOT/source`` at all, and the files are owned by another user
  with mode 0400 (:func:`autograder.gradescope.run.lock_solutions`).
- ``solutions/class_seed``: the assignment's secret class seed (drawn at build time, or the
  one given with ``--seed``), locked with the solutions: every submission is graded with the
  exercise's seed derived from it (:mod:`autograder.host.class_seed`), so every student faces
  the same hidden inputs and the same code gets the same grade, also after a regrade.
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
from ..exercises import known_bad
from ..host.class_seed import SEED_FILE, new_class_seed
from ..report.export import gradescope_grader_failure
from .lock import LOCK_NAME, canonical, lock_text, pins
from .run import CONTAINER_NEEDS, PYTHON_ENV, ROOT_ENV, SOLUTIONS_OWNER
from .wheel import build_wheel, project, solution_files

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

apt-get update
# bubblewrap is the sandbox where the container lets it make namespaces; elsewhere each
# grading child runs as an unprivileged user of its own (docs/gradescope.md).
apt-get install -y bubblewrap
PY="$(find_python || true)"
if [ -z "$PY" ]; then
    # Ubuntu 22.04 (Gradescope's default image) has Python 3.10: take 3.11 from deadsnakes.
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

"$VENV/bin/python" -m pip install --upgrade {pip}
# kernelgrade {version}'s dependencies; requirements-lock.txt fixes the version of every
# package pip installs, direct or not (the versions the project was tested with).
"$VENV/bin/python" -m pip install -c "$SOURCE/{lock}" \
{requirements}
"$VENV/bin/python" -m pip install --no-deps "$SOURCE/{wheel}"
# Lock the solutions and pass the preflight once (the instructor solution graded in the
# sandbox), remembered in $ROOT/cache: no submission grades the solution again.
"$VENV/bin/python" -m autograder.gradescope.run {exercise} --setup --root "$ROOT"
"""

_RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission: grade $ROOT/submission for {exercise} into
# $ROOT/results/results.json, only inside the sandbox. Exit status 0: graded (whatever the
# score, a refused file included); 2: the grader is at fault (results.json then has no score
# and says so). A results.json is always written.
ROOT="${{{root_env}:-/autograder}}"
PY="${{{python_env}:-$ROOT/venv/bin/python}}"
RESULTS="$ROOT/results/results.json"
fail() {{
    echo "$1" >&2
    mkdir -p "$ROOT/results"
    cat > "$RESULTS" <<'KERNELGRADE_JSON'
{missing}
KERNELGRADE_JSON
    exit 2
}}
if ! "$PY" -c 'import autograder.gradescope.run' >/dev/null 2>&1; then
    fail "kernelgrade is not installed for $PY: did setup.sh fail?"
fi
rm -f "$RESULTS"
"$PY" -m autograder.gradescope.run {exercise} --root "$ROOT"
status=$?
if [ ! -s "$RESULTS" ]; then
    fail "the grader ended (exit status $status) without writing $RESULTS"
fi
exit "$status"
"""

_README = """# Gradescope autograder for `{exercise}` (kernelgrade {version})

Made by `autograder gradescope build {exercise}`. Upload this zip as the assignment's
autograder (Configure Autograder, Ubuntu base image). Gradescope runs `setup.sh` once: it
installs Python >= 3.11, bubblewrap, kernelgrade's dependencies at the versions of
`requirements-lock.txt` and the kernelgrade wheel in `/autograder/venv`, then grades the
instructor solution once (the preflight) and remembers that it passed in `/autograder/cache`.
Then `run_autograder` runs for every submission.

- Grading happens only inside a sandbox: bubblewrap, or where the container refuses its
  namespaces, each child as an unprivileged user of its own. The container needs {needs}.
  Where neither can run, results.json has no score and says the grader failed ("not your
  score"); setup.sh prints a WARNING. Nothing of the student's runs outside the sandbox.
- The wheel holds no instructor solution (it is what students install); the solution is in
  `solutions/{exercise}/solution.py`, which the grading children never see (bubblewrap
  does not show `/autograder/source`; a child of its own user cannot read it) and which setup
  makes readable by the grader alone (owned by uid {owner}, mode 0400).
- The submission is the `.py` file or `.ipynb` notebook in `/autograder/submission`; with
  several, files that hold no code are set aside, then the one named after the exercise
  (`{exercise}.ipynb`), the one notebook, the one `.py`; the student's output names the file
  graded and each one not graded, with why. None, a link, a special file or a file that is
  not Python source: score 0 and a message.
- Every submission is graded with one secret seed (`solutions/class_seed`, drawn when the
  zip was built; each exercise's seed derives from it as in `autograder batch --seed N`):
  the same code gets the same grade, whoever submits it, at every regrade.
- Hidden tests are named "hidden test N" and say only how they ended (correct, wrong result,
  an error, out of time), before and after grades are published; public tests keep their
  messages. The stdout (instructors only) has every test as graded, and the seed.
- Gradescope has no GPU: grading runs on the Numba CUDA simulator, where the timing test and
  the largest sizes cannot run. Those tests are left out of the test list, and the output says
  "provisional: N points need a GPU": regrade on a GPU (`autograder grade --device gpu`) for
  the final score.
- If the grader's own setup fails (not the student's code), results.json has no score, says
  the grader failed and that this is not the student's score, and `run_autograder` exits 2.
  Fix the setup and use "Regrade All Submissions". The cause is in the submission's
  autograder output (stdout, instructors only).
"""


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")


def pinned(requirement: str) -> str:
    """``requirement`` (``"numba-cuda[cu13]~=0.30.4"``) pinned to its version in the bundle's
    lock file (:func:`autograder.gradescope.lock.lock_text`), else to the version installed
    here (``"numba-cuda[cu13]==0.30.4"``), so Gradescope grades with the versions the project
    was tested with; unchanged when neither knows it."""
    m = _REQUIREMENT.match(requirement)
    if not m:
        return requirement
    version = pins(lock_text()).get(canonical(m.group(1)))
    if version is None:
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
        "kernelgrade is not installed in the autograder image (did setup.sh fail?), or the "
        "grader ended without writing results.json (see the autograder output)", 0), indent=2)
    fields = dict(exercise=exercise, version=p.version, root_env=ROOT_ENV,
                  python_env=PYTHON_ENV, wheel=wheel_name, major=MIN_PYTHON[0],
                  minor=MIN_PYTHON[1], requirements=_requirements(p.requires), missing=missing,
                  lock=LOCK_NAME, pip=shlex.quote(pinned("pip")), needs=CONTAINER_NEEDS,
                  owner=SOLUTIONS_OWNER)
    return {"setup.sh": _SETUP.format(**fields), "run_autograder": _RUN.format(**fields),
            "README.md": _README.format(**fields)}


def course_files(exercise: str) -> dict[str, bytes]:
    """``{"assignments/<exercise>/exercise.py": bytes, ...}``: a course's own assignment (one
    not among the built-in assignments the wheel carries) as the bundle carries it: its
    definition, driver and notebook text, and the helpers its folder of assignments shares
    (``*.py`` there), and the extract of its known-bad files' advice
    (:data:`~autograder.exercises.known_bad.ADVICE_FILE`, written now); never its known-bad
    submissions or variants. Empty for a built-in one (the wheel carries its advice)."""
    if exercises.is_builtin(exercise):
        return {}
    folder = exercises.folder(exercise)
    out = {f"assignments/{exercise}/{name}": (folder / name).read_bytes()
           for name in (exercises.DEFINITION, exercises.DRIVER, exercises.NOTEBOOK)
           if (folder / name).is_file()}
    advice = known_bad.extract(known_bad.for_exercise(folder))
    if advice is not None:
        out[f"assignments/{exercise}/{known_bad.ADVICE_FILE}"] = advice.encode()
    out.update({f"assignments/{p.name}": p.read_bytes()
                for p in exercises.shared_helpers(exercise)})
    return out


def build_bundle(exercise: str, out: Path, seed: int | None = None) -> Path:
    """Write the Gradescope autograder zip for ``exercise`` to ``out`` and return it.
    ``seed``: the class's secret seed the bundle keeps (default: drawn at random; a
    non-negative ``int``; ``ValueError`` otherwise).
    Raises :class:`autograder.exercises.UnknownExercise`, ``LookupError`` when this kernelgrade
    has no metadata, and ``FileNotFoundError`` when the exercise's instructor solution is not
    found (an installed kernelgrade: set ``$KERNELGRADE_SOLUTIONS`` or ``--solutions``)."""
    exercises.get(exercise)
    out = Path(out)
    solutions = solution_files(exercise)  # before anything is written
    if seed is None:
        seed = new_class_seed()
    if seed < 0:
        raise ValueError(f"a class's secret seed is a non-negative number, not {seed}")
    solutions[f"solutions/{SEED_FILE}"] = f"{seed}\n".encode()
    own = course_files(exercise)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        texts = render(exercise, wheel.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in texts.items():
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.external_attr = (0o755 if name != "README.md" else 0o644) << 16
                z.writestr(entry, text, zipfile.ZIP_DEFLATED)
            files = {wheel.name: wheel.read_bytes(), LOCK_NAME: lock_text().encode(),
                     **own, **solutions}
            for name, data in files.items():
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.external_attr = (0o600 if name in solutions else 0o644) << 16
                z.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return out
