"""Every environment variable kernelgrade reads, in one table (issue 23).

Each module that reads one takes its name from here (``os.environ.get(settings.SANDBOX)``), so a
variable is renamed, documented and found in one place; ``tests/test_settings.py`` holds the
package to that and the README's table to this one. The values are read where they are used,
when they are used (a course's config or a test may set them late).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    """One environment variable: its ``name``, its ``default`` (as text; "" for none) and what
    it does (``meaning``, a phrase for the README's table)."""

    name: str
    default: str
    meaning: str


SANDBOX = "KERNELGRADE_SANDBOX"
DEVICE = "KERNELGRADE_DEVICE"
SOLUTIONS = "KERNELGRADE_SOLUTIONS"
ASSIGNMENTS = "KERNELGRADE_ASSIGNMENTS"
CACHE_DIR = "KERNELGRADE_CACHE_DIR"
PREFLIGHT_CACHE = "KERNELGRADE_PREFLIGHT_CACHE"
KERNEL_CACHE = "KERNELGRADE_KERNEL_CACHE"
KERNEL_CACHE_WRITE = "KERNELGRADE_KERNEL_CACHE_WRITE"
GRADER_PACKAGES = "KERNELGRADE_GRADER_PACKAGES"
CGROUP = "KERNELGRADE_CGROUP"
CELL_TIMEOUT = "KERNELGRADE_CELL_TIMEOUT"
GRADESCOPE_ROOT = "KERNELGRADE_GRADESCOPE_ROOT"
GRADESCOPE_PYTHON = "KERNELGRADE_GRADESCOPE_PYTHON"
TEST_DEVICE = "KERNELGRADE_TEST_DEVICE"
#: Every variable's name starts so; a child inherits none of them
#: (autograder.sandbox.limits.child_env).
PREFIX = "KERNELGRADE_"

VARIABLES = (
    Variable(SANDBOX, "auto", "`require` (bubblewrap or no grade), `auto` (bubblewrap where it "
             "runs, else a plain child for one `grade`, said so; a class needs bubblewrap) or "
             "`off` (plain children, said in every result: `--no-sandbox`)"),
    Variable(DEVICE, "auto", "where nbgrader's and Gradescope's gradings run: `auto`, `gpu` or "
             "`sim` (the command line takes `--device`)"),
    Variable(SOLUTIONS, "", "a folder of instructor solutions (`<name>.py`) for an installed "
             "kernelgrade or a course's `instructor/solutions` (`--solutions DIR` sets it)"),
    Variable(ASSIGNMENTS, "", "a course's own folders of assignments, separated by `:` "
             "(`--assignments DIR` sets it; a course's config too)"),
    Variable(CACHE_DIR, "~/.cache/kernelgrade", "the folder of the passed-preflight and "
             "compiled-kernel caches"),
    Variable(PREFLIGHT_CACHE, "on", "`off` grades the instructor solution in every process "
             "(`--no-preflight-cache` sets it)"),
    Variable(KERNEL_CACHE, "", "set by the grader for its warm-up only: the folder it writes the "
             "host's compiled timing kernels to (cubin; no child is shown it)"),
    Variable(KERNEL_CACHE_WRITE, "", "set by the grader for its warm-up process only: that "
             "process may write the host's cache of compiled kernels"),
    Variable(CGROUP, "", "a cgroup v2 folder (memory and pids controllers on) each child's "
             "own cgroup is made in; default: one found where this user may, else the "
             "watchdog holds the process-tree caps"),
    Variable(GRADER_PACKAGES, "", "set by the grader for its children: the versions the child "
             "must import (numpy, numba, numba-cuda, llvmlite)"),
    Variable(CELL_TIMEOUT, "120", "seconds nbgrader gives a notebook cell when it runs notebooks "
             "(a course's config)"),
    Variable(GRADESCOPE_ROOT, "/autograder", "the Gradescope root `run_autograder` grades in "
             "(tests and a local trial)"),
    Variable(GRADESCOPE_PYTHON, "", "the Python `run_autograder` grades with (default: the "
             "image's venv)"),
    Variable(TEST_DEVICE, "sim", "the device the test suite grades on (`gpu` on a GPU machine)"),
)
