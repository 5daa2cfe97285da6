"""The exercise registry: every module here defines one ``EXERCISE``."""

from __future__ import annotations

import importlib
import pkgutil

from .base import Exercise


class UnknownExercise(KeyError):
    """No exercise of that name; ``str()`` lists the known ones."""

    def __str__(self) -> str:
        return f"unknown exercise {self.args[0]!r}; known: {', '.join(names())}"


def names() -> list[str]:
    """Names of all exercises (modules here that define ``EXERCISE``), sorted."""
    found = []
    for m in pkgutil.iter_modules(__path__):
        if hasattr(importlib.import_module(f"{__name__}.{m.name}"), "EXERCISE"):
            found.append(m.name)
    return sorted(found)


def get(name: str) -> Exercise:
    """The exercise called ``name``. Raises :class:`UnknownExercise`."""
    if name not in names():
        raise UnknownExercise(name)
    return importlib.import_module(f"{__name__}.{name}").EXERCISE
