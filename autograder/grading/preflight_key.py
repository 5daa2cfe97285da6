"""The preflight cache's key (:func:`fingerprint`): a SHA-256 over everything that could change
the instructor solution's verdict, as :mod:`autograder.grading.preflight` describes it. Also the key of
the driver's occupancy answers (:mod:`autograder.grading.driver_occupancy`). Grades nothing."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from autograder import settings
from autograder.host.cache_folder import CACHE_ENV, CACHE_SWITCH_ENV
from autograder.host.environment import package_facts

CACHE_FORMAT = 1
# Environment variables the children inherit that could change a verdict (by prefix).
_ENV_PREFIXES = ("NUMBA_", "CUDA_", "LD_", "PYTHON", "NVIDIA_", settings.PREFIX)
# Left out of the key's environment: the cache's own settings, and variables whose effect the
# key holds already, so that one setup reached another way shares the pass. PYTHONPATH: the
# child's import path and what is installed there are parts; KERNELGRADE_SOLUTIONS: the
# solution's bytes are (where it lies changes nothing); KERNELGRADE_DEVICE: the device the
# grading resolved to is.
_ENV_IGNORED = (CACHE_ENV, CACHE_SWITCH_ENV, settings.TEST_DEVICE, "PYTHONPATH",
                settings.SOLUTIONS, settings.DEVICE)


def _sha256_files(paths) -> str:
    """SHA-256 over the names and bytes of ``paths`` (a missing file counts as missing)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path).encode() + b"\0")
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(b"\0missing\0")
        h.update(b"\0")
    return h.hexdigest()


def _package_digest() -> str:
    """SHA-256 of every ``.py`` file of the ``autograder`` package (names relative to it)."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _installed(folders: list[str]) -> dict[str, list[str]]:
    """For each import folder, the names of the distributions installed there (``dist-info``
    and ``egg-info`` folders, which carry the versions) and its ``.pth`` files."""
    found = {}
    for folder in folders:
        try:
            names = sorted(n for n in os.listdir(folder)
                           if n.endswith((".dist-info", ".egg-info", ".pth")))
        except OSError:
            names = []
        found[folder] = names
    return found


def _stat(path: str | None) -> list | None:
    """``[path, size, mtime_ns]`` of an executable, or None."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [os.path.realpath(path), st.st_size, st.st_mtime_ns]


def _gpu_facts() -> list[list[str]] | None:
    """Every GPU ``nvidia-smi`` lists: index, UUID, name, driver version and compute
    capability; None when it gives no answer. Asked once per process (an answer is kept), with
    the GPU held shared (:mod:`autograder.host.gpulock`): ``nvidia-smi`` beside a timing measurement
    now and then slowed one of its samples (issue 22)."""
    if _GPU_FACTS:
        return [list(row) for row in _GPU_FACTS[0]]
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    from autograder.host import gpulock

    held = contextlib.nullcontext() if gpulock.held() else gpulock.gpu(exclusive=False)
    with held:
        for fields in ("index,uuid,name,driver_version,compute_cap",
                       "index,uuid,name,driver_version"):
            try:
                out = subprocess.run([smi, f"--query-gpu={fields}", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                return None
            rows = [[f.strip() for f in ln.split(",")] for ln in out.stdout.splitlines()
                    if ln.strip()]
            if out.returncode == 0 and rows:
                _GPU_FACTS.append(tuple(tuple(row) for row in rows))
                return [list(row) for row in rows]
    return None


_GPU_FACTS: list = []  # the first answer of _gpu_facts in this process


def fingerprint(exercise: str, backend: str, sanitize: bool) -> tuple[str, dict] | None:
    """The preflight cache's key for ``exercise`` on ``backend`` (``"sim"`` or ``"gpu"``) with
    ``sanitize``: ``(hex SHA-256, the parts it was made of)``, the parts as JSON-able values
    (see the module's docstring for what they are). None when a part cannot be read here (no
    answer from ``nvidia-smi`` on a GPU): such a preflight is not cached. Raises what
    :func:`autograder.exercises.get` raises for an unknown exercise."""
    from autograder import exercises
    from autograder.sandbox import bwrap, mode
    from autograder.judge import sanitizer

    folder = exercises.folder(exercise)
    try:
        solution = exercises.solution_path(exercises.get(exercise))  # as the preflight does
    except FileNotFoundError:
        return None  # the preflight itself says so
    import_path = bwrap.import_path()
    status = mode.sandbox_status()
    parts = {
        "format": CACHE_FORMAT,
        "exercise": exercise,
        "kernelgrade": _package_digest(),
        "exercise_files": _sha256_files([folder / exercises.DEFINITION, folder / exercises.DRIVER,
                                         solution, *exercises.shared_helpers(exercise)]),
        "packages": package_facts(),
        "import_path": import_path,
        "installed": _installed(import_path),
        "python": [sys.executable, os.path.realpath(sys.executable), sys.version],
        "device": backend,
        "sandbox": {"mode": mode.requested(), "bubblewrap": status.available,
                    "user": status.user, "reason": status.reason, "broken": mode.fallen_back(backend),
                    "bwrap": _stat(shutil.which("bwrap")) if status.available else None},
        "sanitize": bool(sanitize),
        "env": {k: v for k, v in sorted(os.environ.items())
                if k.startswith(_ENV_PREFIXES) and k not in _ENV_IGNORED},
    }
    if backend == "gpu":
        gpus = _gpu_facts()
        if gpus is None:
            return None
        parts["gpus"] = gpus
        parts["sanitizer"] = _stat(sanitizer.executable()) if sanitize else None
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest(), json.loads(text)
