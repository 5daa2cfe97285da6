"""One secret seed per class and exercise: the rule every path grades by (issue 32).

The hidden inputs of a grading derive from a secret seed. For the same code to get the same
grade whoever submits it, every student of a class faces the same hidden inputs for an exercise:

* a class has one secret **class seed** (63 random bits, drawn once and kept where students
  cannot read it: ``autograder batch``'s SQLite store, an nbgrader course's
  ``instructor/class_seed``, a Gradescope bundle's ``solutions/class_seed``);
* each exercise's seed is :func:`exercise_seed` of the class seed and the exercise's name.

So a rerun, a resumed batch, a second ``nbgrader autograde`` and every Gradescope submission of
one assignment grade an exercise with the same seed; one class seed given to two paths
(``autograder batch --seed N``, ``autograder course build --seed N``, ``autograder gradescope
build --seed N``) makes their seeds equal too.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from autograder.errors import GraderSetupError

#: The name of a class seed's file (a course's ``instructor/``, a bundle's ``solutions/``).
SEED_FILE = "class_seed"


def exercise_seed(class_seed: int, exercise: str) -> int:
    """The secret seed every submission of ``exercise`` is graded with in the class whose
    secret seed is ``class_seed``: 63 bits of SHA-256 of both (a non-negative ``int``)."""
    digest = hashlib.sha256(f"{class_seed}:exercise:{exercise}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def new_class_seed() -> int:
    """A fresh secret class seed: 63 random bits from :mod:`secrets`."""
    return secrets.randbits(63)


def _parse(path: Path, text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise GraderSetupError(f"{path}: the class's secret seed file holds no whole number "
                               f"({text.strip()[:40]!r}); restore it or delete it to draw a "
                               "new seed (grades made since would then change)") from None
    if value < 0:
        raise GraderSetupError(f"{path}: the class's secret seed is negative ({value})")
    return value


def read(path: str | Path) -> int | None:
    """The class seed kept in ``path``, or None when there is no such file. Raises
    :class:`autograder.errors.GraderSetupError` when it cannot be read or holds no whole
    number: a grader fault, never a student's."""
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise GraderSetupError(f"cannot read the class's secret seed {path}: {exc}") from None
    return _parse(path, text)


def read_or_create(path: str | Path, requested: int | None = None) -> int:
    """The class seed kept in ``path``, drawn (or ``requested``) and written there (mode 0600,
    whole or not at all, also when two processes race: the first file written wins) when the
    file does not exist yet. Raises :class:`autograder.errors.GraderSetupError` when the file
    cannot be read or written, and when ``requested`` differs from the seed already kept."""
    path = Path(path)
    kept = read(path)
    if kept is None:
        seed = new_class_seed() if requested is None else int(requested)
        if seed < 0:
            raise GraderSetupError(f"a class's secret seed is a non-negative number, not {seed}")
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(f"{seed}\n")
            try:
                os.link(tmp, path)  # fails if another process wrote one first: theirs wins
            except FileExistsError:
                pass
        except OSError as exc:
            raise GraderSetupError(f"cannot write the class's secret seed {path}: {exc}") from None
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        kept = read(path)
        if kept is None:
            raise GraderSetupError(f"the class's secret seed {path} vanished as it was written")
    if requested is not None and int(requested) != kept:
        raise GraderSetupError(f"{path} already keeps this class's secret seed, which is not "
                               "the one asked for; grade with the kept one, or delete the file "
                               "first (grades made with the old seed would then change)")
    return kept
