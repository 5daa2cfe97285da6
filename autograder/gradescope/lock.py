"""The exact versions the Gradescope image installs: the project's ``requirements-lock.txt``
(every package of the tested environment, ``name==version``), which ``setup.sh`` passes to pip
as constraints (``-c``) while it installs kernelgrade's dependencies, so every package pip
installs, direct or not, is at the tested version.

An installed kernelgrade has no lock file beside it: :func:`lock_text` then writes one from the
installed distributions that kernelgrade's dependencies need (:func:`closure`), at the versions
installed here.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

from .wheel import PACKAGE_DIR, project

LOCK_NAME = "requirements-lock.txt"
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``Numba_CUDA`` → ``numba-cuda``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def checkout_lock() -> Path | None:
    """The source checkout's ``requirements-lock.txt``, or None (an installed kernelgrade)."""
    path = PACKAGE_DIR.parent / LOCK_NAME
    return path if path.is_file() and (PACKAGE_DIR.parent / "pyproject.toml").is_file() else None


def pins(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of the ``name==version`` lines of a lock file's text."""
    found = {}
    for line in text.splitlines():
        m = _PIN.match(line)
        if m:
            found[canonical(m.group(1))] = m.group(2)
    return found


def closure(requires: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``{canonical name: installed version}`` of the distributions installed here that
    ``requires`` (PEP 508 strings, extras and markers honoured for this interpreter) need,
    directly or not. A requirement that is not installed here is left out (pip will say so)."""
    from packaging.requirements import Requirement

    found: dict[str, str] = {}
    todo = [(Requirement(r), "") for r in requires]
    seen: set[tuple[str, str]] = set()
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonical(req.name)
        for wanted in sorted(req.extras) or [""]:
            if (name, wanted) in seen:
                continue
            seen.add((name, wanted))
            try:
                dist = importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                continue
            found[name] = dist.version
            todo += [(Requirement(r), wanted) for r in dist.requires or []]
    return dict(sorted(found.items()))


def lock_text() -> str:
    """The lock file the bundle carries: the checkout's ``requirements-lock.txt``, else one
    written from :func:`closure` of kernelgrade's dependencies."""
    path = checkout_lock()
    if path is not None:
        return path.read_text()
    lines = [f"{n}=={v}" for n, v in closure(project().requires).items()]
    return ("# kernelgrade's dependencies at the versions installed where the bundle was built\n"
            + "\n".join(lines) + "\n")
