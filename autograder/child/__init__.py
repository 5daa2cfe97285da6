"""The child's side: what runs in the grading child process (``python -m autograder.child.harness``),
in the sandbox, beside the student's code. It never imports the grader's side (the sandbox, the
grading steps, the entry points): ``tests/test_layers.py``.

- :mod:`.harness`: the entry point; reads the request, runs the phases, sends typed records.
- :mod:`.contract`: imports the submission and checks its definitions against the contract.
- :mod:`.cases`: launches the cases (and the instrumented runs) on fresh buffers.
- :mod:`.timing`: times the student's kernel against the instructor's.
- :mod:`.device`: facts about the GPU and the driver, started early.
- :mod:`.simulator`: the simulator's settings.
- :mod:`.channel`: the child's end of the private channel (records, errors, findings).
"""
