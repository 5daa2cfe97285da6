"""A wheel of the running ``kernelgrade`` (the ``autograder`` package, as ``pip wheel .``
would pack it: no instructor solution, no known-bad submission), for the Gradescope bundle to
install with no access to our repository. The bundle carries the instructor solution beside
it (:func:`solution_files`; :mod:`autograder.gradescope.bundle`).

It is packed from the package this process imported, so it works from a source checkout (the
packages and package data that pyproject.toml lists) and from a ``pip install`` (the installed
files). Either way :func:`_instructor_only` files are left out. The dependencies, version and
console script come from pyproject.toml in a checkout, else from the installed distribution's
metadata (which pip wrote from that same pyproject.toml).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import zipfile
from dataclasses import dataclass
from pathlib import Path

import autograder
from autograder import exercises
from autograder.exercises import package as assignment_package

DIST = "kernelgrade"
PACKAGE_DIR = Path(autograder.__file__).resolve().parent
# A zip entry's time: fixed, so the same checkout gives the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Project:
    """What the wheel's metadata says: ``requires`` are the runtime dependencies as
    pyproject.toml states them (``"numpy~=2.4.6"``, no extras' dependencies), ``scripts`` maps a
    console command to its ``module:object``."""

    name: str
    version: str
    summary: str
    requires_python: str
    requires: tuple[str, ...]
    scripts: dict[str, str]


def _checkout_pyproject() -> Path | None:
    path = PACKAGE_DIR.parent / "pyproject.toml"
    return path if path.is_file() and f'name = "{DIST}"' in path.read_text() else None


def project() -> Project:
    """The project's metadata: from pyproject.toml in a source checkout, else from the
    installed ``kernelgrade`` distribution. Raises ``LookupError`` when neither is found."""
    pyproject = _checkout_pyproject()
    if pyproject is not None:
        import tomllib

        p = tomllib.loads(pyproject.read_text())["project"]
        return Project(p["name"], p["version"], p.get("description", ""),
                       p.get("requires-python", ""), tuple(p.get("dependencies", [])),
                       dict(p.get("scripts", {})))
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        raise LookupError(f"{DIST} is neither a source checkout (no pyproject.toml beside "
                          f"{PACKAGE_DIR}) nor installed") from None
    meta = dist.metadata
    requires = tuple(r for r in (dist.requires or []) if "extra ==" not in r)
    scripts = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    return Project(meta["Name"], meta["Version"], meta.get("Summary", ""),
                   meta.get("Requires-Python", ""), requires, scripts)


def solution_files(exercise: str) -> dict[str, bytes]:
    """``{"solutions/<exercise>/solution.py": bytes}`` (and ``.../solution_blockdim.py`` where
    the exercise has one): the exercise's instructor solutions, as
    :func:`autograder.exercises.solution_path` finds them (the ``solutions/`` folder beside its
    assignments, else ``$KERNELGRADE_SOLUTIONS``), laid out as ``$KERNELGRADE_SOLUTIONS``
    expects. Raises ``FileNotFoundError`` (naming the variable) when there is none."""
    solution = exercises.solution_path(exercise)
    out = {f"solutions/{exercise}/solution.py": solution.read_bytes()}
    blockdim = exercises.timing_solution_path(exercise, bounds_at_run_time=True)
    if blockdim != solution:
        out[f"solutions/{exercise}/solution_blockdim.py"] = blockdim.read_bytes()
    return out


def _instructor_only(name: str) -> bool:
    """True for a wheel entry (``name``: its archive path) students must never get: an
    assignment's known-bad submissions or textbook variants, or any instructor solution."""
    parts = name.split("/")
    return (parts[0] == assignment_package.BUILTIN
            and any(p in (exercises.MUTANTS, exercises.VARIANTS, exercises.SOLUTIONS_FOLDER)
                    for p in parts[1:])) or parts[-1] in ("solution.py", "solution_blockdim.py")


def _kept(name: str) -> bool:
    return not any(part.startswith((".", "__pycache__")) for part in name.split("/")) \
        and not name.endswith((".pyc", ".pyo")) and not _instructor_only(name)


def _checkout_files(pyproject: Path) -> dict[str, Path]:
    """Archive name → file for the package files setuptools puts in a wheel, by
    pyproject.toml's ``[tool.setuptools]`` ``packages`` (each one's ``*.py``, in its
    ``package-dir`` folder) and ``package-data`` (globs in each package)."""
    import tomllib

    tool = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]
    data = tool.get("package-data", {})
    dirs = tool.get("package-dir", {})
    found: dict[str, Path] = {}
    for package in tool["packages"]:
        folder = PACKAGE_DIR.parent.joinpath(*dirs.get(package, package.replace(".", "/"))
                                             .split("/"))
        prefix = package.replace(".", "/")
        files = set(folder.glob("*.py"))
        for pattern in data.get(package, []):
            files.update(folder.glob(pattern))
        for f in files:
            found[f"{prefix}/{f.relative_to(folder).as_posix()}"] = f
    return found


def _installed_files() -> dict[str, Path]:
    """Archive name → file for an installed kernelgrade: the ``autograder`` package and the
    built-in assignments (``kernelgrade_assignments``)."""
    found = {f"autograder/{p.relative_to(PACKAGE_DIR).as_posix()}": p
             for p in PACKAGE_DIR.rglob("*")}
    builtin = exercises.builtin_root()
    if builtin is not None:
        found.update({f"{assignment_package.BUILTIN}/{p.relative_to(builtin).as_posix()}": p
                      for p in builtin.rglob("*")})
    return found


def _contents() -> dict[str, bytes]:
    """Archive name → bytes of every package file (:func:`_checkout_files` in a checkout, the
    installed files otherwise), less caches and :func:`_instructor_only` files."""
    pyproject = _checkout_pyproject()
    files = _checkout_files(pyproject) if pyproject is not None else _installed_files()
    return {name: f.read_bytes() for name, f in sorted(files.items())
            if f.is_file() and _kept(name)}


def _metadata(p: Project) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p.name}", f"Version: {p.version}",
             f"Summary: {p.summary}"]
    if p.requires_python:
        lines.append(f"Requires-Python: {p.requires_python}")
    lines += [f"Requires-Dist: {r}" for r in p.requires]
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(out_dir: Path) -> Path:
    """Write ``<out_dir>/kernelgrade-<version>-py3-none-any.whl`` (PEP 427: pure Python, the
    ``autograder`` package without instructor solutions or known-bad submissions, METADATA with
    pyproject.toml's ``Requires-Dist``, the console script) and return its path. Raises
    ``LookupError`` (see :func:`project`)."""
    p = project()
    info = f"{p.name}-{p.version}.dist-info"
    files = _contents()
    files[f"{info}/METADATA"] = _metadata(p).encode()
    files[f"{info}/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: autograder.gradescope.wheel\n"
                              "Root-Is-Purelib: true\nTag: py3-none-any\n").encode()
    files[f"{info}/entry_points.txt"] = ("[console_scripts]\n" + "".join(
        f"{k} = {v}\n" for k, v in sorted(p.scripts.items()))).encode()
    files[f"{info}/top_level.txt"] = f"autograder\n{assignment_package.BUILTIN}\n".encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{p.name}-{p.version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, _EPOCH)
            entry.external_attr = 0o644 << 16
            z.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return path
