"""The bundle's grading step: ``python -m autograder.gradescope.run EXERCISE`` grades the
submission in ``<root>/submission`` into ``<root>/results/results.json``; with ``--setup``
(``setup.sh``, once per image) it prepares the image instead (:func:`setup`).

``<root>`` is ``/autograder`` on Gradescope, or ``$KERNELGRADE_GRADESCOPE_ROOT`` (``--root``).
The device is ``$KERNELGRADE_DEVICE`` (``--device``), default ``auto`` (Gradescope's machines
have no GPU: the simulator, and a provisional score that says so).

Both steps grade in one environment (:func:`grading_environment`): a sandbox required
(``KERNELGRADE_SANDBOX=require``: bubblewrap, or, in a container where it cannot make its
namespaces (Docker's default seccomp profile), each child as an unprivileged user of its own,
:mod:`autograder.sandbox.dropuser`; results.json's ``extra_data["sandbox"]`` says which), the
bundle's ``solutions/`` as ``$KERNELGRADE_SOLUTIONS`` (locked by :func:`lock_solutions`), the preflight's remembered pass in ``<root>/cache`` (unless
``$KERNELGRADE_CACHE_DIR`` names another folder). So the pass :func:`setup` stores has the key
each submission's grading computes (:func:`autograder.grading.preflight.fingerprint`), and a changed
solution, package or sandbox grades the solution again.

A submission is graded in this order, and results.json is always written:

1. Where no sandbox can run (neither bubblewrap nor, as root, a user of its own for each
   child): no score, and a message that the grader failed (exit 2). No student code runs
   outside the sandbox.
2. No file to grade, a link or special file, a file that cannot be read as Python source: score
   0 and one message for the student (exit 0). No byte behind a link is read. Among several
   files, the one graded is chosen by :func:`choose_submission`, and the student's output names
   it and every file not graded, with why (:meth:`Choice.note`): never a silent choice.
3. Otherwise the grading (exit 0, whatever the score), with the assignment's secret seed: every
   submission of the assignment faces the same hidden inputs (:func:`class_seed`).

Exit status 2 when the grader is at fault (:class:`autograder.errors.GraderSetupError`, a crash
of the grader): results.json has no score and says the grader failed
(:func:`autograder.report.export.gradescope_grader_failure`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from .. import exercises
from autograder.host.cache_folder import CACHE_ENV
from ..errors import GraderSetupError
from ..host import class_seed as seeds
from ..report import export
from .. import settings

DEFAULT_ROOT = "/autograder"
ROOT_ENV = settings.GRADESCOPE_ROOT
PYTHON_ENV = settings.GRADESCOPE_PYTHON
SANDBOX_ENV = settings.SANDBOX
DEVICE_ENV = settings.DEVICE
#: Owner of the bundle's solutions when the grader runs as root (Gradescope's containers): a
#: user id nothing runs as. A child of the sandbox is root without capabilities, so a file owned
#: by another user with mode 0400 is closed to it, while the grader (root with its capabilities)
#: still reads it.
SOLUTIONS_OWNER = 64123
SUFFIXES = (".py", ".ipynb")
#: What a container needs to grade (a sandbox), for the message and the docs.
CONTAINER_NEEDS = ("either the bwrap program (setup.sh installs the bubblewrap package) with "
                   "permission to create mount, PID and network namespaces (as root: "
                   "CAP_SYS_ADMIN, and seccomp and AppArmor profiles that allow unshare and "
                   "mount), or, where bubblewrap cannot, to run as root with CAP_SETUID and "
                   "CAP_SETGID (Docker's default), a Python and kernelgrade that every user may "
                   "read, and the solutions closed to other users (docs/gradescope.md)")


def grading_environment(root: Path) -> dict[str, str]:
    """Set this process's environment for grading in ``root``, the same at setup and for every
    submission: ``KERNELGRADE_SANDBOX=require``, ``$KERNELGRADE_SOLUTIONS`` =
    ``<root>/source/solutions``, ``$KERNELGRADE_ASSIGNMENTS`` = ``<root>/source/assignments``
    when the bundle carries a course's own assignment, ``$KERNELGRADE_CACHE_DIR`` =
    ``<root>/cache`` unless set; the
    runner's own variables (root, Python, device) are removed, so they are not part of the
    preflight's key. Returns the variables set."""
    for name in (ROOT_ENV, PYTHON_ENV, DEVICE_ENV):
        os.environ.pop(name, None)
    chosen = {SANDBOX_ENV: "require",
              exercises.SOLUTIONS_ENV: str(root / "source" / "solutions"),
              CACHE_ENV: os.environ.get(CACHE_ENV) or str(root / "cache")}
    if (root / "source" / "assignments").is_dir():  # a course's own assignment, carried along
        chosen[exercises.ASSIGNMENTS_ENV] = str(root / "source" / "assignments")
    os.environ.update(chosen)
    return chosen


def lock_solutions(folder: Path) -> str:
    """Make the instructor solutions under ``folder`` readable by the grader alone: folders
    0700, files 0400, and, when this process is root, owned by :data:`SOLUTIONS_OWNER` (a
    sandboxed child is root without capabilities: the owner bits are not its). Links are left
    alone. Returns one line saying what was done (also when ``folder`` is missing)."""
    if not folder.is_dir():
        return f"solutions: {folder} is not a folder"
    owner = SOLUTIONS_OWNER if os.geteuid() == 0 else None
    for dirpath, dirnames, filenames in os.walk(folder):
        for name, mode in [("", 0o700)] + [(d, 0o700) for d in dirnames] + \
                [(f, 0o400) for f in filenames]:
            path = os.path.join(dirpath, name) if name else dirpath
            if os.path.islink(path):
                continue
            if owner is not None:
                os.chown(path, owner, owner, follow_symlinks=False)
            os.chmod(path, mode)
    who = f"owned by uid {owner}" if owner is not None else "owned by this user"
    return f"solutions: {folder} locked ({who}, folders 0700, files 0400)"


def seed_file(root: Path) -> Path:
    """The bundle's file of the class's secret seed: ``<root>/source/solutions/class_seed``,
    locked with the solutions (:func:`lock_solutions`); no grading child sees the folder."""
    return root / "source" / "solutions" / seeds.SEED_FILE


def class_seed(root: Path) -> int:
    """The class's secret seed, kept in the bundle (:func:`seed_file`, drawn by ``autograder
    gradescope build``); a bundle without one (made before kernelgrade kept one) gets one drawn
    and kept there, and a line on standard output says so: then only submissions graded in
    this image share it. Raises :class:`autograder.errors.GraderSetupError` when it cannot be
    read or written."""
    path = seed_file(root)
    if seeds.read(path) is None:
        print(f"WARNING: the bundle keeps no class seed ({path}); one was drawn for this image. "
              "Rebuild the bundle (autograder gradescope build) so that every submission of "
              "the assignment is graded with the same seed.")
    return seeds.read_or_create(path)


# ---------------------------------------------------------------------------------------------
# The submission


def _walk(folder: Path):
    """Every entry below ``folder`` that is not a folder (links and special files included),
    without following links; hidden names and ``__MACOSX``-like folders skipped."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        if e.name.startswith((".", "__")):
            continue
        if e.is_dir(follow_symlinks=False):
            yield from _walk(Path(e.path))
        else:
            yield Path(e.path)


def _candidates(folder: Path) -> list[Path]:
    return [p for p in _walk(folder) if p.suffix in SUFFIXES]


def _names_exercise(path: Path, exercise: str) -> bool:
    # "06_grid_barrier.ipynb" names grid_barrier; "grid_barrier_lockfree.py" does not.
    return re.search(rf"(?<![a-z]){re.escape(exercise)}(?![a-z0-9_])", path.stem.lower()) \
        is not None


@dataclass(frozen=True)
class Choice:
    """What :func:`choose_submission` found in a submission folder: ``path``, the file to grade
    (None when there is none, and then ``why``, the message for the student), and ``ignored``,
    the other ``.py`` / ``.ipynb`` files, each as (name below the folder, why it is not graded)."""

    path: Path | None
    why: str = ""
    ignored: tuple[tuple[str, str], ...] = ()

    def note(self, folder: Path, graded: bool = True) -> str:
        """The line a student reads about the files: which one was graded (``graded`` False:
        chosen, then refused) and which were not, and why; ``""`` when the submission held one
        file."""
        if self.path is None or not self.ignored:
            return ""
        others = "; ".join(f"{name} ({why})" for name, why in self.ignored)
        chosen = self.path.relative_to(folder)
        head = f"Graded {chosen}." if graded else f"The file chosen to grade was {chosen}."
        return f"{head} Not graded: {others}. Submit only the file you want graded."


def _contents(path: Path) -> str:
    """``"code"``, ``"empty"`` (read, and no code in it: an empty ``.py``, a notebook whose code
    cells are empty, a file of 0 bytes) or ``"unread"`` (a link, a pipe, a malformed notebook:
    refused later with its own message). No link is followed
    (:func:`autograder.source.submission.load_source`)."""
    from autograder.source.submission import EmptySubmission, SubmissionError, load_source

    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            return "empty"
        load_source(path)
    except EmptySubmission:
        return "empty"
    except (SubmissionError, OSError):
        return "unread"
    return "code"


def choose_submission(folder: Path, exercise: str) -> Choice:
    """The file to grade in Gradescope's submission ``folder`` (searched recursively, links
    not followed; hidden folders, ``__MACOSX`` and ``.ipynb_checkpoints`` ignored), the other
    candidates and why each is not graded, or why there is nothing to grade. A link or special
    file with a ``.py`` / ``.ipynb`` name counts (it is refused later, with its own message:
    :func:`refusal`).

    One ``.py`` / ``.ipynb`` file is it. Among several, files that hold no code (an empty
    notebook beside the ``.py`` file that holds the work) are set aside, then the ones whose
    name names the exercise (``tiled_matmul.ipynb``, ``01_tiled_matmul.py``) are preferred,
    then a single notebook, then a single ``.py`` file; anything still ambiguous is refused
    with the list of files.
    """
    found = _candidates(folder)
    if not found:
        others = sorted(p.name for p in _walk(folder))
        listing = f" (it holds: {', '.join(others[:10])})" if others else " (it is empty)"
        return Choice(None, f"No .py file or .ipynb notebook was found in your submission"
                            f"{listing}. Upload your notebook ({exercise}.ipynb) or a .py file "
                            "that defines what the exercise asks for.")
    set_aside: dict[Path, str] = {}
    if len(found) > 1:
        contents = {p: _contents(p) for p in found}
        if "code" in contents.values():
            set_aside.update((p, "it holds no code") for p in found if contents[p] == "empty")
    pool = [p for p in found if p not in set_aside]
    named = [p for p in pool if _names_exercise(p, exercise)]
    if named:
        set_aside.update((p, f"its name does not name {exercise}") for p in pool
                         if p not in named)
        pool = named
    notebooks = [p for p in pool if p.suffix == ".ipynb"]
    scripts = [p for p in pool if p.suffix == ".py"]
    for group, why in ((pool, ""), (notebooks, "a notebook is graded before a .py file"),
                       (scripts, "there are several notebooks and one .py file")):
        if len(group) == 1:
            set_aside.update((p, why) for p in pool if p not in group)
            ignored = tuple((str(p.relative_to(folder)), set_aside[p]) for p in found
                            if p != group[0])
            return Choice(group[0], "", ignored)
    names = ", ".join(str(p.relative_to(folder)) for p in pool)
    return Choice(None, f"Your submission has several files that could be the {exercise} "
                        f"exercise ({names}); submit only one .py file or .ipynb notebook, for "
                        f"instance {exercise}.ipynb.")


def find_submission(folder: Path, exercise: str) -> tuple[Path | None, str]:
    """``(path, why)`` of :func:`choose_submission`: the file to grade, or why there is none."""
    choice = choose_submission(folder, exercise)
    return choice.path, choice.why


def refusal(path: Path) -> str:
    """Why ``path`` is not graded without being read (a link, whatever it points to, or not a
    regular file: a pipe, a device), or ``""``. Only ``lstat`` is used: no byte is read."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return f"{path.name} cannot be read ({exc.strerror})."
    if stat.S_ISLNK(mode):
        return (f"{path.name} is a link to another file, and links are not graded: upload the "
                "file itself.")
    if not stat.S_ISREG(mode):
        return f"{path.name} is not a regular file, so it is not graded: upload the file itself."
    return ""


def unreadable(path: Path) -> str:
    """Why the student's ``path`` cannot be graded as Python source, or ``""``: what
    :func:`autograder.source.submission.load_source` refuses and what the parse check
    (:mod:`autograder.sandbox.parse_check`: compiled in a child, under limits) refuses as too deep or too
    large, which is the file's doing, never the grader's. A syntax error is graded (with its
    line), not refused. Raises :class:`autograder.errors.GraderSetupError` when the parse
    check's child cannot run."""
    from autograder.sandbox import parse_check
    from autograder.source.submission import SubmissionError, load_source

    try:
        source = load_source(path)
    except SubmissionError as exc:
        return str(exc)
    refusal = parse_check.check(source)
    if refusal is None or refusal.reason == "the code does not parse":
        return ""
    return refusal.message


def _student_zero(exercise: str, message: str, seconds: float) -> dict:
    """results.json for a submission refused before grading: score 0 and the message."""
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


def require_sandbox() -> str:
    """The sandbox children run in here: ``"bubblewrap"``, or ``"user"`` where bubblewrap cannot
    run and this root process can start each child as an unprivileged user of its own
    (:mod:`autograder.sandbox.dropuser`). Raises
    :class:`autograder.sandbox.mode.SandboxUnavailable` (a ``GraderSetupError``) naming the
    cause and what the container needs when neither can."""
    from autograder.sandbox.mode import SandboxUnavailable, sandbox_status

    status = sandbox_status()
    if not status.sandboxed:
        raise SandboxUnavailable(
            f"the grading sandbox (bubblewrap, or a user of its own for each child) cannot run "
            f"in this container: {status.reason.rstrip('.')}. "
            f"kernelgrade grades on Gradescope only inside it, so no student code was run. The "
            f"container needs {CONTAINER_NEEDS}.")
    return status.name


def close_cache(folder: Path) -> None:
    """Make the cache folder (the preflight's pass, compiled kernels) this user's alone (made
    when missing, mode 0700), so a child run as a user of its own does not read it."""
    folder.mkdir(parents=True, exist_ok=True)
    if not folder.is_symlink():
        os.chmod(folder, 0o700)


# ---------------------------------------------------------------------------------------------
# The steps


def run(root: Path, exercise: str, device: str = "auto") -> int:
    """Grade ``<root>/submission`` for ``exercise`` on ``device`` and write
    ``<root>/results/results.json``; return the exit status (see the module docstring). The
    console report goes to standard output (Gradescope's ``results/stdout``, shown to
    instructors)."""
    start = time.monotonic()
    try:
        grading_environment(root)  # first: a course's own assignment is registered by it
        if exercise not in exercises.names():
            raise GraderSetupError(str(exercises.UnknownExercise(exercise)))
        print(lock_solutions(root / "source" / "solutions"))
        close_cache(Path(os.environ[CACHE_ENV]))
        sandbox = require_sandbox()
        print(f"sandbox: {sandbox}")
        folder = root / "submission"
        choice = choose_submission(folder, exercise)
        path, files = choice.path, choice.note(folder)
        why = (choice.why or refusal(path) or unreadable(path)).replace(f"{folder}{os.sep}", "")
        if why:
            files = choice.note(folder, graded=False)
            why = f"{why}\n{files}" if files else why
            print(f"not graded: {why}")
            _write(root, _student_zero(exercise, why, time.monotonic() - start))
            return 0
        if files:
            print(files)
        print(f"grading {path} for {exercise} on device {device}", flush=True)
        from ..grader import grade
        from ..report.console import print_result

        seed = seeds.exercise_seed(class_seed(root), exercise)
        try:
            result = grade(path, exercise, device=device, seed=seed)
        except ValueError as exc:  # bad device or arguments: the bundle's configuration
            raise GraderSetupError(str(exc)) from exc
        results = export.to_gradescope(result.to_dict(), time.monotonic() - start)
        results.setdefault("extra_data", {})["sandbox"] = result.sandbox or sandbox
        if files:  # after the score's own line: which file was graded, which were not
            first, _, rest = results["output"].partition("\n")
            results["output"] = "\n".join(x for x in (first, files, rest) if x)
        _write(root, results)
        print_result(result)
        print(f"graded in {time.monotonic() - start:.1f} s")
        return 0
    except GraderSetupError as exc:
        print(f"grader setup error: {exc}", file=sys.stderr)
        _write(root, export.gradescope_grader_failure(str(exc), time.monotonic() - start))
        return GraderSetupError.exit_code
    except Exception as exc:  # a crash of the grader itself: never the student's zero
        traceback.print_exc()
        _write(root, export.gradescope_grader_failure(
            f"the grader crashed: {type(exc).__name__}: {exc}", time.monotonic() - start))
        return GraderSetupError.exit_code


def setup(root: Path, exercise: str, device: str = "auto") -> int:
    """Prepare the image (``setup.sh``, as root): lock the bundle's solutions, check that the
    exercise and its solution are found, and pass the preflight once (the instructor solution
    graded in the sandbox, remembered in the cache folder, so no submission grades it again).
    Returns 0; 2 when the solution is missing or fails the preflight (the image is unusable).
    Where no sandbox can run (:func:`require_sandbox`), it warns and returns 0: the grading
    container may allow what the image build does not, and each submission checks again."""
    from ..exercises import solution_path
    from autograder.sandbox.mode import SandboxUnavailable

    env = grading_environment(root)
    print(lock_solutions(root / "source" / "solutions"))
    close_cache(Path(env[CACHE_ENV]))
    try:
        print(f"{exercise}: instructor solution {solution_path(exercises.get(exercise))}")
        class_seed(root)
    except (exercises.UnknownExercise, FileNotFoundError, GraderSetupError) as exc:
        print(f"kernelgrade setup check failed: {exc}", file=sys.stderr)
        return 2
    start = time.monotonic()
    try:
        print(f"sandbox: {require_sandbox()}")
        from ..grader import resolve_device
        from autograder.grading import preflight

        backend = resolve_device(device)
        preflight.check(exercise, backend)
    except SandboxUnavailable as exc:
        print(f"WARNING: {exc} Until it can, every submission gets no score and a message "
              "that the grader failed.", file=sys.stderr)
        return 0
    except (GraderSetupError, ValueError) as exc:
        print(f"kernelgrade setup: {exc}", file=sys.stderr)
        return 2
    print(f"preflight of {exercise} on {backend}: passed in {time.monotonic() - start:.1f} s, "
          f"remembered in {env[CACHE_ENV]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line of ``run_autograder`` and ``setup.sh``:
    ``EXERCISE [--root DIR] [--device D] [--setup]``."""
    ap = argparse.ArgumentParser(prog="python -m autograder.gradescope.run",
                                 description="Grade a Gradescope submission (run_autograder).")
    ap.add_argument("exercise")
    ap.add_argument("--root", type=Path, default=Path(os.environ.get(ROOT_ENV, DEFAULT_ROOT)),
                    help=f"Gradescope's root (default ${ROOT_ENV} or {DEFAULT_ROOT}).")
    ap.add_argument("--device", default=os.environ.get(DEVICE_ENV, "auto"),
                    help="auto (GPU if there is one), gpu or sim.")
    ap.add_argument("--setup", action="store_true",
                    help="Prepare the image (setup.sh): lock the solutions, pass the preflight "
                         "once.")
    args = ap.parse_args(argv)
    if args.setup:
        return setup(args.root, args.exercise, args.device)
    return run(args.root, args.exercise, args.device)


if __name__ == "__main__":
    sys.exit(main())
