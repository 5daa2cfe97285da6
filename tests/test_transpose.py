"""transpose: the contract's BLOCK_ROWS check. Solutions and known-bad submissions of every
exercise are checked in test_exercises.py."""

from autograder import exercises

EXERCISE = "transpose"


def test_contract():
    ex = exercises.get(EXERCISE)
    assert [(c.name, c.low, c.high) for c in ex.contract.constants] == [
        ("TILE_DIM", 32, 32), ("BLOCK_ROWS", 1, 32)]
    (expr, _), = ex.contract.checks
    legal = [r for r in range(1, 33) if eval(expr, {}, {"TILE_DIM": 32, "BLOCK_ROWS": r})]
    assert legal == [1, 2, 4, 8, 16, 32]
    assert ex.outputs({"rows": 5, "cols": 37}) == {"B": ((37, 5), "float32")}
    assert ex.max_score == 100
