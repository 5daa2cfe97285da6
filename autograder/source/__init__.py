"""A submission's source: read from a ``.py`` or notebook (``submission``), its definitions run
alone (``definitions``), what the simulator runs checked to be what a GPU compiles (``same_code``),
which loops the block's size bounds at run time (``loops``), and a thread-safe ``ast.parse``
(``pyast``). Foundations: no grading."""
