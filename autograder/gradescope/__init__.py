"""Gradescope: the autograder bundle (:mod:`.bundle`, with the package as a wheel,
:mod:`.wheel`) and the grading step it runs for every submission (:mod:`.run`).

Grading happens only inside bubblewrap; the instructor solution is out of the children's sight
and locked; hidden tests read "hidden test N" and how they ended (docs/gradescope.md).
results.json follows Gradescope's autograder specification: test statuses are ``passed`` or
``failed`` only, so skipped tests (timing and the largest sizes on the simulator) are left out
of ``tests`` and named in ``output`` with "provisional: N points need a GPU"; a fault of the
grader's own setup gives a results.json without a score that says so, never a zero
(:func:`autograder.report.export.to_gradescope`, :func:`~autograder.report.export.gradescope_grader_failure`).
"""
