"""An exercise's equivalent mutants: ``mutants/equivalent.toml`` in its folder, written by hand.

Each line maps a mutant id (:mod:`autograder.mutation.operators`) to one line saying why the
mutant computes what the solution computes for every input the contract allows, so no test can
kill it::

    # Equivalent one-edit mutants of solution.py (autograder mutants occupancy).
    L19-guard-ifexp-1 = "shared_bytes_per_block is never 0 ..."

The file is TOML (read with the standard library's ``tomllib``): bare keys may hold letters,
digits, ``-`` and ``_``, which is all an id holds.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from .. import exercises

FILE = "equivalent.toml"


def path(exercise: str) -> Path:
    """Where exercise ``exercise`` keeps its list (which may not exist)."""
    return exercises.folder(exercise) / exercises.MUTANTS / FILE


def load(file: Path) -> dict[str, str]:
    """Mutant id -> reason, from ``file``; empty when it does not exist. Raises ``ValueError``
    naming the file for one that is not TOML or maps an id to anything but a non-empty string."""
    if not file.is_file():
        return {}
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ValueError(f"{file}: not a list of equivalent mutants ({exc})") from None
    bad = [key for key, value in data.items() if not isinstance(value, str) or not value.strip()]
    if bad:
        raise ValueError(f"{file}: each mutant id needs a one-line reason in quotes; "
                         f"not so for {', '.join(bad)}")
    return {key: value.strip() for key, value in data.items()}
