"""What crosses a boundary: the framed channel and typed records between grader and child
(``channel``, ``protocol``), an exercise's contract, the one part of it a child receives
(``contract``), the guarded buffers and launch shapes both sides compute (``buffers``,
``shapes``), and the typed results the reports render (``results``). Foundations: no grading."""
