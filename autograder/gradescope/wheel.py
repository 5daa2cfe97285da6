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
from .. import exercises

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
    """``{"solutions/<exercise>/solution.py": bytes}``: the exercise's instructor solution, as
    :func:`autograder.exercises.solution_path` finds it (a checkout's exercise folder, else
    ``$KERNELGRADE_SOLUTIONS``), laid out as ``$KERNELGRADE_SOLUTIONS`` expects. Raises
    ``FileNotFoundError`` (naming the variable) when there is none."""
    path = exercises.solution_path(exercise)
    return {f"solutions/{exercise}/{exercises.SOLUTION}": path.read_bytes()}


def _instructor_only(rel: Path) -> bool:
    """True for a package file (``rel``: relative to the package) students must never get: an
    exercise's instructor solution or known-bad submissions."""
    parts = rel.parts
    return (len(parts) >= 3 and parts[0] == "exercises"
            and (parts[2] == exercises.MUTANTS or parts[-1] == exercises.SOLUTION))


def _kept(rel: Path) -> bool:
    return not any(part.startswith((".", "__pycache__")) for part in rel.parts) \
        and rel.suffix not in (".pyc", ".pyo") and not _instructor_only(rel)


def _checkout_files(pyproject: Path) -> list[Path]:
    """The package files setuptools puts in a wheel, by pyproject.toml's ``[tool.setuptools]``
    ``packages`` (each one's ``*.py``) and ``package-data`` (globs in each package)."""
    import tomllib

    tool = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]
    data = tool.get("package-data", {})
    found: set[Path] = set()
    for package in tool["packages"]:
        folder = PACKAGE_DIR.parent.joinpath(*package.split("."))
        found.update(folder.glob("*.py"))
        for pattern in data.get(package, []):
            found.update(folder.glob(pattern))
    return sorted(found)


def _contents() -> dict[str, bytes]:
    """Archive name → bytes of every package file (:func:`_checkout_files` in a checkout, the
    installed files otherwise), less caches and :func:`_instructor_only` files."""
    pyproject = _checkout_pyproject()
    files = (_checkout_files(pyproject) if pyproject is not None
             else [p for p in PACKAGE_DIR.rglob("*")])
    out = {}
    for f in files:
        rel = f.relative_to(PACKAGE_DIR)
        if f.is_file() and _kept(rel):
            out["autograder/" + rel.as_posix()] = f.read_bytes()
    return dict(sorted(out.items()))


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
    files[f"{info}/top_level.txt"] = b"autograder\n"
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
