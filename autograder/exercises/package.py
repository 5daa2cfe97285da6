"""A folder of assignments imported as a Python package of its own, in any process.

Every folder of assignments (the built-in ``assignments/``, a course's ``--assignments DIR``) is
imported under a package name made from its path (:func:`package_name`), registered in
``sys.modules`` with the folder as its ``__path__`` (:func:`register`). So an assignment's
``exercise.py`` may import its siblings relatively (``from . import driver``,
``from ..matmul_common import ...``), whatever the folder is called and wherever it lies, and a
grading child imports an exercise's driver by the same name after registering the same folder
(the request's contract carries both). Imports nothing of the grader's.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path

#: The package name of the built-in assignments.
BUILTIN = "kernelgrade_assignments"


def package_name(root: Path | str, builtin: bool = False) -> str:
    """The package name of the folder ``root``: :data:`BUILTIN`, or one made from its resolved
    path (the same in every process on this host)."""
    if builtin:
        return BUILTIN
    digest = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:12]
    return f"kernelgrade_course_{digest}"


def register(name: str, root: Path | str) -> None:
    """Make ``name`` the package whose modules are the files below ``root`` (no
    ``__init__.py`` needed). Registering the same name again for the same folder does nothing;
    for another folder, the package is replaced and its loaded modules forgotten."""
    folder = str(Path(root).resolve())
    known = sys.modules.get(name)
    if known is not None and list(getattr(known, "__path__", [])) == [folder]:
        return
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [folder]
    package = importlib.util.module_from_spec(spec)
    package.__doc__ = f"the assignments in {folder}"
    sys.modules[name] = package


def import_driver(module: str, root: str | None) -> types.ModuleType:
    """Import an exercise's driver ``module`` (a full name, as the registry gives it in a
    contract), its folder of assignments ``root`` registered first. Raises ``ImportError``."""
    if root:
        register(module.split(".")[0], root)
    return importlib.import_module(module)
