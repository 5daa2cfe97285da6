"""The CLI's ``--json`` output: exactly one JSON object (CONTRACTS.md, "The command line")."""

from __future__ import annotations

import json

from autograder.wire.results import ExerciseResult


def render(result: ExerciseResult) -> str:
    return json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
