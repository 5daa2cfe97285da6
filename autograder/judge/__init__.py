"""Judging a child's records into an exercise's tests, without side effects: correctness cases
(``cases``, ``compare``), the three tests together (``collect``), concept use from PTX and counts
(``concept_use``, ``ptx``), diagnostics and compute-sanitizer findings (``diagnostics``,
``sanitizer``), and performance hints (``hints``, ``occupancy_calculator``)."""
