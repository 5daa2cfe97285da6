"""Tests of autograder.instrument (a package, so its module names never clash with tests/)."""
