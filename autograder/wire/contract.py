"""An exercise's contract: the public half of an exercise, the only part of it a child receives.

:class:`Contract` restates CONTRACTS.md: the names a submission defines, the launch rule, the
argument layout. The grader puts it in the child's :class:`autograder.wire.protocol.Request`,
which crosses as plain data (:meth:`Contract.to_dict`); the child rebuilds it
(:meth:`Contract.from_dict`) and reads its attributes. It holds no case, no answer and no
secret: those stay in the grader's :class:`autograder.exercises.base.Exercise`, which holds a
Contract (definitions import both from :mod:`autograder.define`).
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields


class ContractFormatError(ValueError):
    """A contract's plain form (:meth:`Contract.to_dict`) that does not fit the class: a field
    missing, unknown or of the wrong type. The grader's fault: it wrote the request."""


def _strings(d: dict, name: str) -> tuple[str, ...]:
    value = d[name]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ContractFormatError(f"contract field {name} is not a list of strings: {value!r:.80}")
    return tuple(value)


def _optional_str(d: dict, name: str) -> str | None:
    value = d[name]
    if value is not None and not isinstance(value, str):
        raise ContractFormatError(f"contract field {name} is not a string: {value!r:.80}")
    return value


def _keys(cls, d) -> None:
    """Raise :class:`ContractFormatError` unless ``d`` is a dict with exactly ``cls``'s fields
    (those with a default may be missing)."""
    if not isinstance(d, dict):
        raise ContractFormatError(f"a {cls.__name__} is not a dict: {d!r:.80}")
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if _no_default(f)}
    unknown, missing = set(d) - names, required - set(d)
    if unknown or missing:
        raise ContractFormatError(f"{cls.__name__} fields do not fit: unknown {sorted(unknown)}, "
                                  f"missing {sorted(missing)}")


def _no_default(f) -> bool:
    return f.default is MISSING and f.default_factory is MISSING


@dataclass(frozen=True)
class Constant:
    """An integer the submission defines at module level, e.g. ``TILE_WIDTH`` in 1..32."""

    name: str
    low: int
    high: int
    power_of_two: bool = False

    @classmethod
    def from_dict(cls, d: dict) -> Constant:
        """The constant ``asdict`` gave. Raises :class:`ContractFormatError`."""
        _keys(cls, d)
        c = cls(**d)
        if not (isinstance(c.name, str) and all(type(v) is int for v in (c.low, c.high))
                and type(c.power_of_two) is bool):
            raise ContractFormatError(f"constant fields of the wrong type: {d!r:.80}")
        return c


@dataclass(frozen=True)
class Contract:
    """The public half of an exercise, as CONTRACTS.md states it.

    ``grid`` and ``block`` are expressions over the case parameters and the constants, with
    ``ceil(a / b)`` meaning integer ceiling division. ``args`` lists the kernel's arguments in
    order; ``signature`` gives each one's Numba type (for compiling to PTX without a GPU).
    ``checks`` are ``(expression, message)`` pairs over the constants that must hold.
    ``driver`` names a module with ``drive(module, arrays, params, consts)`` for exercises where
    the grader's own kernel calls the student's device function, below the folder of
    assignments (``"grid_barrier.driver"`` for ``assignments/grid_barrier/driver.py``); the
    registry sets ``driver_root``, the folder a child imports it from. ``functions`` names plain
    Python functions for exercises with no kernel (``kernel`` is then empty): each case calls
    ``params["call"]`` with keyword arguments ``params["args"]`` and compares the value returned.
    ``zeroed`` names the outputs that start at zero before every launch (an accumulator such as
    a histogram's bins, which the kernel adds into): the cases, the instrumented runs and both
    kernels' timed launches zero them; every other output starts poisoned (NaN, or an integer
    sentinel), so an element the kernel never writes is caught. A zeroed output keeps its guard
    bands: a write outside it is still reported.
    """

    kernel: str
    constants: tuple[Constant, ...]
    args: tuple[str, ...]
    signature: tuple[str, ...]
    grid: tuple[str, ...] = ()
    block: tuple[str, ...] = ()
    checks: tuple[tuple[str, str], ...] = ()
    device_function: bool = False
    driver: str | None = None
    functions: tuple[str, ...] = ()
    zeroed: tuple[str, ...] = ()
    driver_root: str | None = None

    @property
    def names(self) -> list[str]:
        """The names a submission must define: the constants, the functions, the kernel."""
        names = [c.name for c in self.constants] + list(self.functions)
        return names + ([self.kernel] if self.kernel else [])

    def to_dict(self) -> dict:
        """Plain data (dicts, tuples, strings, ints, bools, None) that pickles and goes through
        JSON; :meth:`from_dict` rebuilds the same contract from it."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Contract:
        """The contract whose :meth:`to_dict` is ``d`` (lists may stand for its tuples, as after
        a JSON round trip); fields with a default may be missing. Raises
        :class:`ContractFormatError` for a missing or unknown field or one of the wrong type."""
        _keys(cls, d)
        checks = d.get("checks", ())
        if not isinstance(checks, (list, tuple)) or not all(
                isinstance(c, (list, tuple)) and len(c) == 2
                and all(isinstance(s, str) for s in c) for c in checks):
            raise ContractFormatError(f"contract field checks is not a list of (expression, "
                                      f"message) pairs: {checks!r:.80}")
        constants = d["constants"]
        if not isinstance(constants, (list, tuple)):
            raise ContractFormatError(f"contract field constants is not a list: "
                                      f"{constants!r:.80}")
        full = {**{f.name: f.default for f in fields(cls) if not _no_default(f)}, **d}
        if not isinstance(full["kernel"], str) or type(full["device_function"]) is not bool:
            raise ContractFormatError(f"contract fields kernel / device_function of the wrong "
                                      f"type: {full['kernel']!r:.40}, "
                                      f"{full['device_function']!r:.40}")
        return cls(full["kernel"], tuple(Constant.from_dict(c) for c in constants),
                   *(_strings(full, n) for n in ("args", "signature", "grid", "block")),
                   tuple((str(e), str(m)) for e, m in checks), full["device_function"],
                   _optional_str(full, "driver"), _strings(full, "functions"),
                   _strings(full, "zeroed"), _optional_str(full, "driver_root"))
