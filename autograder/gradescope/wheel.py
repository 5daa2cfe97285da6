"""A wheel of the running ``kernelgrade`` (the ``autograder`` package with its instructor
solutions as ``autograder.solutions``), for the Gradescope bundle to install with no access to
our repository.

It is packed from the package this process imported, so it works from a source checkout (the
solutions then come from ``solutions/`` beside the package, as in pyproject.toml's package-dir)
and from a ``pip install .`` (they are inside the package). The pinned dependencies, version and
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

DIST = "kernelgrade"
PACKAGE_DIR = Path(autograder.__file__).resolve().parent
# A zip entry's time: fixed, so the same checkout gives the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Project:
    """What the wheel's metadata says: ``requires`` are the pinned runtime dependencies
    (``"numpy==2.4.6"``, no extras' dependencies), ``scripts`` maps a console command to its
    ``module:object``."""

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


def solutions_dir() -> Path:
    """The instructor solutions: ``solutions/`` of a checkout, else the installed
    ``autograder/solutions``. Raises ``FileNotFoundError`` when there are none."""
    d = PACKAGE_DIR.parent / "solutions" if _checkout_pyproject() else PACKAGE_DIR / "solutions"
    if (d / "__init__.py").is_file():
        return d
    raise FileNotFoundError(f"no instructor solutions beside or inside {PACKAGE_DIR}")


def _files(top: Path) -> list[Path]:
    """Files under ``top``, without caches, compiled files and hidden files."""
    def kept(p: Path) -> bool:
        parts = p.relative_to(top).parts
        return not any(part.startswith((".", "__pycache__")) for part in parts) \
            and p.suffix not in (".pyc", ".pyo")
    return sorted(p for p in top.rglob("*") if p.is_file() and kept(p))


def _contents() -> dict[str, bytes]:
    """Archive name → bytes of every package file, the solutions under autograder/solutions/."""
    sols = solutions_dir()
    out = {}
    for f in _files(PACKAGE_DIR):
        if sols == PACKAGE_DIR / "solutions" or f.parent != PACKAGE_DIR / "solutions":
            out["autograder/" + f.relative_to(PACKAGE_DIR).as_posix()] = f.read_bytes()
    if sols != PACKAGE_DIR / "solutions":
        for f in _files(sols):
            out["autograder/solutions/" + f.relative_to(sols).as_posix()] = f.read_bytes()
    return out


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
    ``autograder`` package, its solutions, METADATA with the pinned ``Requires-Dist``, the
    console script) and return its path. Raises ``LookupError`` / ``FileNotFoundError`` (see
    :func:`project`, :func:`solutions_dir`)."""
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
