"""Parsing compute-sanitizer logs into findings with the student's lines."""

from autograder.judge.sanitizer import parse

SRC = "/tmp/kernelgrade-x/submission.py"

RACECHECK = f"""========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at tiled_matmul+0x350 in {SRC}:24
=========     and Read access at tiled_matmul+0x4a0 in {SRC}:28 [512 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

SYNCCHECK = f"""========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in warp
=========     at block_sum+0x1f0 in {SRC}:18
=========     by thread (8,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 1 error
"""

CLEAN = """========= COMPUTE-SANITIZER
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
"""


def test_racecheck_finding_names_both_lines():
    report = parse("racecheck", RACECHECK, SRC)
    assert report.count == 1
    assert report.findings[0].lines == [24, 28]
    assert "Write access" in report.findings[0].what


def test_synccheck_divergent_barrier_names_its_line():
    report = parse("synccheck", SYNCCHECK, SRC)
    assert report.count == 1
    assert report.findings[0].what.startswith("Barrier error detected")
    assert report.findings[0].lines == [18]


def test_a_clean_log_has_no_findings():
    report = parse("racecheck", CLEAN, SRC)
    assert report.count == 0 and report.findings == []


def test_lines_in_other_files_are_not_the_students():
    text = "========= Invalid __global__ read of size 4 bytes\n=========     at k+0x10 in /usr/lib/numba/x.py:7\n========= ERROR SUMMARY: 1 error\n"
    report = parse("memcheck", text, SRC)
    assert report.count == 1 and report.findings[0].lines == []
