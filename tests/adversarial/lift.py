"""Lift the reach layers, as if a submission had found a way past them, so that a hostile file
tests what holds after them (the reaper, the channel's budget, the PID namespace, the
read-only file system, what the child never holds) rather than the first layer.

A submission's code reaches only numba, numpy and math (:mod:`autograder.source.reach`): the
parse check refuses frames and dunders, the definitions runner the imports and module chains of
the functions the grader calls, and the child gives the module its own built-ins (the import
gate) and an audit hook (:mod:`autograder.child.guard`). Hostile files that ``import os`` to
fork, kill, flood or read stop there. The lift is a ``sitecustomize`` that undoes the four in
any process that finds it on its import path (the grader passes its own path to its children,
and bubblewrap binds it): :func:`lifted_reach` puts it there for this process's gradings,
:func:`lift_env` for a grader started as a process of its own. Tests only: nothing of it is in
the package.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import pytest

_SITECUSTOMIZE = '''"""Lifts the reach layers in this process (tests/adversarial/lift.py): each of the three
modules is patched once it is imported, wherever this process imports the package from."""
import builtins
import importlib.abc
import sys


def _without_reach(check):
    def check_source(source):
        refusal = check(source)
        if refusal is not None and refusal.reason.startswith("the code reaches beyond"):
            return None
        return refusal

    return check_source


def lift(name, module):
    if name == "autograder.source.reach":
        module.student_builtins = lambda: dict(vars(builtins))
        module.check_functions = lambda *args, **kwargs: None
    elif name == "autograder.child.guard":
        module.install = lambda namespace: None
    elif name == "autograder.sandbox.parse_check":
        module.check = _without_reach(module.check)


class _Lifter(importlib.abc.MetaPathFinder):
    NAMES = ("autograder.source.reach", "autograder.child.guard",
             "autograder.sandbox.parse_check")

    def find_spec(self, name, path, target=None):
        if name not in self.NAMES:
            return None
        for finder in sys.meta_path:
            spec = (None if finder is self or not hasattr(finder, "find_spec")
                    else finder.find_spec(name, path, target))
            if spec is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        lift(module.__name__, module)


sys.meta_path.insert(0, _Lifter())
'''
_FOLDER: list[Path] = []


def lift_folder() -> str:
    """The folder of the lifting ``sitecustomize`` (made once per test process)."""
    if not _FOLDER:
        folder = Path(tempfile.mkdtemp(prefix="kernelgrade-lift-"))
        (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
        _FOLDER.append(folder)
    return str(_FOLDER[0])


def lift_env(env: dict) -> dict:
    """``env`` for a grader process (and its children) with the reach layers lifted."""
    paths = [lift_folder(), env.get("PYTHONPATH", "")]
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


@contextlib.contextmanager
def lifted_reach():
    """Within: gradings in this process run with the reach layers lifted (this process's parse
    check, the children it starts, and the processes started with its environment: a batch's
    workers)."""
    import autograder.child.guard as guard
    import autograder.source.reach as reach
    from autograder.sandbox import parse_check

    saved = [(parse_check, "check"), (reach, "student_builtins"), (reach, "check_functions"),
             (guard, "install")]
    saved = [(module, name, getattr(module, name)) for module, name in saved]
    folder = lift_folder()
    site: dict = {}
    exec(compile(_SITECUSTOMIZE.replace("sys.meta_path.insert(0, _Lifter())", ""),
                 os.path.join(folder, "sitecustomize.py"), "exec"), site)
    for module in (reach, guard, parse_check):
        site["lift"](module.__name__, module)
    sys.path.insert(1, folder)  # the children get sys.path[1:] (autograder.sandbox.bwrap)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = lift_env(dict(os.environ))["PYTHONPATH"]
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
        if folder in sys.path:
            sys.path.remove(folder)
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


@pytest.fixture()
def reach_lifted():
    """:func:`lifted_reach` for one test: its hostile code runs past the reach layers."""
    with lifted_reach():
        yield
