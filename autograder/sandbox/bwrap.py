"""The bubblewrap (``bwrap``) arguments of one child: what it sees, what is bound read-only, and
what is hidden from it.

The child sees a read-only system (``/usr`` and the loader's files in ``/etc``), the Python
installation and virtual environment, every folder the grader's own imports come from
(PYTHONPATH entries, the user site, conda prefixes: see :func:`import_path`, searched by the
child in the grader's order), the ``autograder`` package's layers the child imports
(:data:`CHILD_PACKAGE`: the grading steps, the judges, the front ends and the grader's own
GPU queries are empty folders there, :func:`package_hidden`), the assignments (each exercise
folder's solution, known-bad submissions and notebook source hidden) and the scratch folder with
the submission, read-only; a private ``/tmp`` (a size-capped tmpfs, also its working folder and
``HOME``); no network (``--unshare-net``); its own PID namespace (``--unshare-pid``: it cannot
see or signal the grader, and every process it starts dies with it); no capabilities; and
``--die-with-parent``. The project's ``tests/``, ``examples/``, ``.git``, other users' files and
other submissions are simply not there. GPU device nodes (``/dev/nvidia*``: the child's own
GPU's only, where :mod:`autograder.sandbox.gpu_nodes` can name it) and ``/sys`` are passed
through only where a GPU is present.

The instructor solution is not visible in the sandbox: for GPU timing the grader sends its
source text inside the request (on standard input, read before any student code is defined), so
there is no path to find and nothing on disk to read; simulator runs, which do no timing, never
receive it.
"""

from __future__ import annotations

import glob
import os
import sys
import tempfile
from pathlib import Path

from autograder.sandbox import gpu_nodes

#: The checkout (or site-packages folder) that holds the ``autograder`` package.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: The ``autograder`` package's folder, bound read-only.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
TMPFS_BYTES = 256 << 20
#: What a child sees of the ``autograder`` package: the harness and the foundations it imports
#: (``tests/test_layers.py``: the child layer and below, and the sandbox's own modules). The
#: rest (``grading/``: the grader's driver queries among them, ``judge/``, ``batch/``,
#: ``report/``, the front ends, ``grader.py``, ``cli.py``) is hidden, so no code in a child can
#: import it, whatever it gets past the child's own gate.
CHILD_PACKAGE = frozenset({"__init__.py", "errors.py", "settings.py", "define.py", "__pycache__",
                           "child", "wire", "source", "exercises", "host", "timing",
                           "simulator", "instrument", "sandbox"})

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload", "alternatives",
              "localtime", "passwd", "group", "nsswitch.conf", "hosts", "host.conf")


def _covered(path: Path, bound: list[Path]) -> bool:
    return any(path == b or b in path.parents for b in bound)


def _hidden_from_children() -> tuple[list[Path], list[Path]]:
    """(folders no bind may contain, lie in or be: the checkout's tests, examples and .git;
    folders no bind may contain or be: the temporary folder, where other
    submissions' scratch folders are)."""
    from autograder import exercises

    inside = exercises.every_solution_folder()
    if (PROJECT_ROOT / "pyproject.toml").is_file():  # a source checkout, not site-packages
        inside += [PROJECT_ROOT / n for n in ("tests", "examples", ".git")
                   if (PROJECT_ROOT / n).exists()]
    return [p.resolve() for p in inside], [Path(tempfile.gettempdir()).resolve()]


def _instructor_files_hidden(bound: list[Path]) -> list[str]:
    """bwrap arguments that hide what only the instructor sees, wherever a bound folder shows
    it: in every folder of assignments, each assignment's known-bad submissions and textbook
    variants (empty folders) and notebook source (an empty file); every folder of solutions
    (:func:`autograder.exercises.every_solution_folder`) inside a ``bound`` one as an empty
    folder (no bind is made of one or of a folder that holds one: :func:`_shows_hidden`)."""
    from autograder import exercises

    args: list[str] = []
    for root in exercises.roots():
        for definition in sorted(root.glob(f"*/{exercises.DEFINITION}")):
            folder = definition.parent
            if (folder / exercises.NOTEBOOK).is_file():
                args += ["--ro-bind", "/dev/null", str(folder / exercises.NOTEBOOK)]
            for hidden in (exercises.MUTANTS, exercises.VARIANTS):
                if (folder / hidden).is_dir():
                    args += ["--tmpfs", str(folder / hidden)]
    for folder in exercises.every_solution_folder():  # inside a bound venv or course: emptied
        if _covered(folder, bound):
            args += ["--tmpfs", str(folder)]
    return args


def package_hidden() -> list[str]:
    """bwrap arguments that hide what a child does not import of the ``autograder`` package
    (everything but :data:`CHILD_PACKAGE`): an empty folder over a folder, ``/dev/null`` over a
    module file (unreadable there: bwrap binds it without device access)."""
    args: list[str] = []
    for entry in sorted(PACKAGE_DIR.iterdir()):
        if entry.name in CHILD_PACKAGE or entry.is_symlink():
            continue
        if entry.is_dir():
            args += ["--tmpfs", str(entry)]
        elif entry.is_file():
            args += ["--ro-bind", "/dev/null", str(entry)]
    return args


def assignment_dirs() -> list[Path]:
    """The folders of assignments a child reads (an exercise's driver), bound read-only."""
    from autograder import exercises

    return [r.resolve() for r in exercises.roots()]


def _shows_hidden(path: Path) -> bool:
    """True when binding ``path`` (resolved) would show a child what it must not see."""
    inside, around = _hidden_from_children()
    return (any(path == h or path in h.parents or h in path.parents for h in inside)
            or any(path == h or path in h.parents for h in around))


def import_path() -> list[str]:
    """The grader's own ``sys.path`` entries a child searches too, in the grader's order (the
    installation, the venv, the user site, PYTHONPATH entries, conda prefixes, ``.pth``
    additions): absolute, existing, not ``sys.path[0]`` (the script's or working folder, unless
    ``-P``), not the working folder, and none that would show the project's solutions or tests or
    other submissions (:func:`_shows_hidden`; a package only found there is reported by the
    child's package check instead)."""
    entries = sys.path if sys.flags.safe_path else sys.path[1:]
    cwd = Path.cwd().resolve() if os.path.isdir(os.curdir) else None
    out: list[str] = []
    for e in entries:
        if not e or not os.path.isabs(e) or e in out or not os.path.exists(e):
            continue
        real = Path(e).resolve()
        if real == cwd or _shows_hidden(real):
            continue
        out.append(e)
    return out


def _imported_from() -> list[Path]:
    """Folders of the packages a child needs (numpy, numba, numba-cuda, llvmlite), wherever the
    grader finds them: an editable install's finder may map them outside ``sys.path``."""
    from autograder.host.environment import package_facts

    found = [Path(f["path"]) for f in package_facts().values() if f]
    return [p for p in found if p.is_dir() and not _shows_hidden(p)]


def _python_dirs() -> list[Path]:
    """Folders the interpreter and its packages live in (installation, venv, real executable),
    and every folder the grader's own imports come from (:func:`import_path`,
    :func:`_imported_from`)."""
    dirs = []
    for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable)),
              os.path.dirname(os.path.abspath(sys.executable))):
        path = Path(p).resolve()
        if path.is_dir():
            dirs.append(path)
    import site

    for p in site.getsitepackages():
        path = Path(p).resolve()
        if path.is_dir():
            dirs.append(path)
    dirs += [Path(p).resolve() for p in import_path()] + _imported_from()
    # Widest first, so nested ones are skipped.
    out: list[Path] = []
    for d in sorted(set(dirs), key=lambda d: len(d.parts)):
        if not _covered(d, out):
            out.append(d)
    return out


def _library_dirs() -> list[Path]:
    """Where the CUDA toolkit and driver libraries may live outside ``/usr``: ``CUDA_HOME`` and
    friends, ``LD_LIBRARY_PATH``, and the folders ``/etc/ld.so.conf.d`` lists."""
    found = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")]
    found += os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    for conf in sorted(glob.glob("/etc/ld.so.conf.d/*.conf")):
        try:
            found += [ln.strip() for ln in Path(conf).read_text().splitlines()]
        except OSError:
            pass
    dirs = []
    for v in found:
        if v and v.startswith("/") and Path(v).is_dir():
            path = Path(v).resolve()
            if path.parts[1:2] not in (("proc",), ("sys",), ("dev",)):
                dirs.append(path)
    return dirs


def arguments(workdir: Path, gpu: bool, extra_ro: tuple[Path, ...] = (),
              writable: Path | None = None) -> list[str]:
    """The ``bwrap`` arguments for one child (up to, not including, the command).
    ``extra_ro``: more folders to show read-only (a wrapper tool's installation);
    ``writable``: a folder shown read-write at its own path (a wrapper's log folder)."""
    cmd = ["bwrap", "--die-with-parent", "--new-session",
           "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--cap-drop", "ALL",
           "--hostname", "kernelgrade"]
    bound: list[Path] = []
    for d in _SYSTEM_DIRS:
        p = Path(d)
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), d]
        elif p.is_dir():
            cmd += ["--ro-bind", d, d]
            bound.append(p)
    for name in _ETC_FILES:
        cmd += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # The private /tmp first: bwrap mounts in order, so a Python, a venv or a checkout that
    # lives under /tmp (a CI clone, say) is bound over it below, not hidden by it.
    cmd += ["--proc", "/proc", "--dev", "/dev",
            "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
            "--size", str(16 << 20), "--tmpfs", "/dev/shm"]
    for d in _python_dirs() + _library_dirs() + [Path(p).resolve() for p in extra_ro]:
        if not _covered(d, bound):
            cmd += ["--ro-bind", str(d), str(d)]
            bound.append(d)
    for entry in import_path():  # reached through a symlink the child would not have
        alias = Path(os.path.abspath(entry))
        if alias != Path(entry).resolve() and not _covered(alias, bound):
            cmd += ["--symlink", str(Path(entry).resolve()), str(alias)]
            bound.append(alias)
    if not _covered(PACKAGE_DIR, bound):
        cmd += ["--ro-bind", str(PACKAGE_DIR), str(PACKAGE_DIR)]
        bound.append(PACKAGE_DIR)
    for d in assignment_dirs():
        if not _covered(d, bound) and not _shows_hidden(d):
            cmd += ["--ro-bind", str(d), str(d)]
            bound.append(d)
    cmd += _instructor_files_hidden(bound)
    cmd += package_hidden()
    cmd += ["--ro-bind", str(workdir), str(workdir)]
    if writable is not None:
        cmd += ["--bind", str(writable), str(writable)]
    cmd += ["--chdir", "/tmp", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    if gpu:
        for node in gpu_nodes.device_nodes(gpu_nodes.child_gpu()):
            cmd += ["--dev-bind", node, node]
        cmd += ["--ro-bind", "/sys", "/sys"]
        for d in ("/proc/driver/nvidia",):
            if Path(d).exists():
                cmd += ["--ro-bind-try", d, d]
    return cmd

