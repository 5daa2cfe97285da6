"""What the released notebook gives every student of an exercise, as Python code: the setup
cell, the public-test cell, and the instructor solution's imports, constants and helper
functions, with each function the student writes reduced to ``raise NotImplementedError()``
(as nbgrader releases it). Matching it is no sign of copying."""

from __future__ import annotations

import ast

from .. import exercises
from ..nbgrader.authoring import PUBLIC_CELL, SETUP
from ..source import pyast


def released_code(exercise: str) -> str:
    """The skeleton of ``exercise`` (text). Without an instructor solution (an installed
    kernelgrade without ``$KERNELGRADE_SOLUTIONS``), the setup and public-test cells only.
    Raises :class:`autograder.exercises.UnknownExercise` for an unknown exercise."""
    ex = exercises.get(exercise)
    parts = [SETUP, PUBLIC_CELL.format(marker="#", what="kernel", exercise=exercise)]
    try:
        text = exercises.solution_path(ex).read_text(encoding="utf-8")
        tree = pyast.parse(text)
    except (FileNotFoundError, SyntaxError, ValueError):
        return "\n".join(parts)
    own = set(ex.contract.functions or (ex.contract.kernel,))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in own:
            node.body = [ast.Raise(exc=ast.Call(func=ast.Name("NotImplementedError"), args=[],
                                                keywords=[]), cause=None)]
    parts.append(ast.unparse(ast.fix_missing_locations(tree)))
    return "\n".join(parts)
