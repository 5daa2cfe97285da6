"""``python -S nproc.py TASKS CMD ARGS...``: run CMD with ``RLIMIT_NPROC`` at ``TASKS`` where the
kernel counts it for this sandbox alone, else as it is (:mod:`autograder.sandbox.caps`).

The kernel counts ``RLIMIT_NPROC`` (processes and threads) per user and user namespace. Inside
bubblewrap's own user namespace (bwrap run by a user who is not root) that count is the
sandbox's own tasks, so the limit caps one grading's tree at once, a fork bomb included. In the
first user namespace it would count every process of the grader's user on the host, other
gradings included: there the limit is left alone and the watchdog holds the cap. (The kernel
exempts root whatever the namespace; the grader does not start this for a root grader.)
Standard library only (started before the harness, in the sandbox).
"""

from __future__ import annotations

import os
import resource
import sys

#: The identity map of the first user namespace, as ``/proc/self/uid_map`` shows it.
_INIT_MAP = [["0", "0", "4294967295"]]


def own_namespace() -> bool:
    """True in a user namespace other than the first (bubblewrap's)."""
    try:
        with open("/proc/self/uid_map", encoding="ascii") as f:
            lines = [line.split() for line in f if line.strip()]
    except OSError:
        return False
    return bool(lines) and lines != _INIT_MAP


def main(argv: list[str]) -> int:
    tasks, cmd = int(argv[0]), argv[1:]
    if own_namespace():
        resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
    os.execvp(cmd[0], cmd)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
