"""Mutation analysis of an exercise's hidden tests (``autograder mutants``): the one-edit mutants
of its instructor solution (:mod:`.operators`), graded as a class with ``batch`` and sorted into
killed, survivors and those the simulator cannot judge (:mod:`.run`), against the exercise's list
of equivalent mutants (:mod:`.equivalent`)."""
