"""One grading, step by step: where it runs (``devices``), its cases and requests (``plan``),
its children (``children``), the steps after the preflight (``steps``), and the preflight that checks
the grader itself first (``preflight``, ``preflight_key``, ``reference_warmup``,
``driver_occupancy``). The public entry is :func:`autograder.grader.grade`."""
