"""Errors of the grader's own setup, never a student's fault.

A :class:`GraderSetupError` means no grade can be trusted from this run (no GPU where one was
asked for, a package the sandbox cannot see, the instructor's own solution losing points): every
front end stops with exit status 2 and the message, and stores no grade.
"""

from __future__ import annotations


class GraderSetupError(RuntimeError):
    """The grader cannot grade here; ``str(exc)`` is one line naming the cause for the
    instructor (for instance ``"--device gpu, but no GPU is visible (nvidia-smi lists none)"``).
    Front ends (CLI, batch, nbgrader preprocessor, Gradescope runner) exit with status 2."""

    exit_code = 2
