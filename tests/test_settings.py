"""One table of the environment variables (issue 23: 13 ``KERNELGRADE_*`` variables were named in
19 modules): :mod:`autograder.settings` declares each one, the package takes every name from
there, and the README lists them all."""

from __future__ import annotations

import ast
import re

from autograder import settings
from conftest import ROOT

PACKAGE = ROOT / "autograder"
NAME = re.compile(r"KERNELGRADE_[A-Z_]+")
#: Tokens that look like a variable and are not one (a shell here-document's end marker).
NOT_VARIABLES = {"KERNELGRADE_JSON"}
DECLARED = {v.name for v in settings.VARIABLES}


def test_every_variable_is_declared_once():
    names = [v.name for v in settings.VARIABLES]
    assert len(names) == len(set(names))
    constants = {value for key, value in vars(settings).items()
                 if key.isupper() and isinstance(value, str) and key != "PREFIX"}
    assert constants == DECLARED
    assert all(n.startswith(settings.PREFIX) for n in names)


def test_the_package_takes_every_name_from_the_table():
    """No module but settings spells a variable's name as a string of its own; every name a
    message or docstring mentions is declared."""
    spelled, unknown = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if path.name != "settings.py" and NAME.fullmatch(node.value):
                    spelled.append(f"{rel}:{node.lineno}: {node.value}")
        unknown += [f"{rel}: {m}" for m in set(NAME.findall(text)) - DECLARED - NOT_VARIABLES
                    if m != settings.PREFIX]
    assert spelled == []
    assert unknown == []


def test_the_readme_lists_every_variable():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [v.name for v in settings.VARIABLES if f"`{v.name}`" not in readme] == []
