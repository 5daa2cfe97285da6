"""An instructor's tools for their own assignments: ``autograder new`` (``new``), ``check``
(``check``), ``solutions`` (``solutions``), and the contracts generated from the definitions
(``docs``: ``python -m autograder.authoring.docs``)."""
