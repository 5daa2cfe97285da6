"""Launch configurations and shapes written as expressions over a case's parameters and the
submission's constants, as CONTRACTS.md writes them: ``"ceil(n / BLOCK_SIZE)"``.

``ceil(a / b)`` is integer ceiling division. Used by the harness (to launch) and the grader (to
read outputs back), so both agree on every shape.
"""

from __future__ import annotations

import math


def _ceil(x) -> int:
    return math.ceil(x)


def evaluate(exprs, params: dict, consts: dict) -> tuple[int, ...]:
    """Each entry an int, or an expression over ``params`` and ``consts``; returns the ints.
    Raises ``NameError`` / ``SyntaxError`` for an expression naming something unknown."""
    env = {**params, **consts, "ceil": _ceil}
    return tuple(e if isinstance(e, int) else int(eval(e, {"__builtins__": {}}, env))
                 for e in exprs)
