"""The exercise definition API, in one public place (docs/authoring.md).

An assignment's ``exercise.py`` imports what it needs from here::

    from autograder.define import Case, Concept, Constant, Contract, Exercise, Timing, Tolerance

and defines ``EXERCISE = Exercise(...)``. Each class documents its fields (shapes, dtypes, units)
and the ``ValueError`` it raises for a definition that cannot be graded.
"""

from __future__ import annotations

from .exercises.base import (TIMING_FLOAT_RANGE, TIMING_INT_RANGE, Case, Concept, Constant,
                             Contract, Diagnose, Exercise, Timing, Tolerance, Use)

__all__ = ["Case", "Concept", "Constant", "Contract", "Diagnose", "Exercise", "Timing",
           "Tolerance", "Use", "TIMING_FLOAT_RANGE", "TIMING_INT_RANGE"]
