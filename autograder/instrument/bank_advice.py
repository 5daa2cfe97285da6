"""What to do about a shared-memory bank conflict, from what the instrumented run measured
(:mod:`autograder.instrument.banks`): one sentence, in the terms of the student's own array,
that suggests padding only where padding by one element removes the conflict. No imports: the
child's messages and the grader's hints (:mod:`autograder.judge.hints`) both say it."""

from __future__ import annotations


def advice(entry: dict) -> str:
    """The advice for one ``report["bank_conflicts"]`` entry (``array``, ``shape``,
    ``padded_max_ways``: the ways left were the inner dimension one element longer; absent for
    a 1-D array or an older report). Padding is suggested, with the array's own name and
    widths, only when ``padded_max_ways`` is 1; otherwise the lanes' access pattern is the
    fix."""
    name, shape = entry.get("array", "the array"), entry.get("shape") or []
    pad = entry.get("padded_max_ways")
    general = ("make the 32 lanes of a warp touch 32 different banks: consecutive lanes on "
               "consecutive 4-byte words (threadIdx.x in the last index), or a width whose "
               "rows start in different banks")
    if pad == 1 and len(shape) >= 2:
        dims = ", ".join(str(n) for n in shape[:-1])
        return (f"padding {name}'s inner dimension by one element ({name} of shape "
                f"({dims}, {shape[-1]} + 1)) removes it; or change the access order")
    if pad:
        return (f"padding {name}'s rows by one element would not remove it ({pad}-way "
                f"still): {general}")
    return general
