"""compute-sanitizer on the GPU: memcheck, racecheck and synccheck findings as diagnostics.

The child runs a few small cases under ``compute-sanitizer --tool TOOL --log-file FILE`` with the
student's kernel compiled with ``lineinfo=True``, so each finding names a line of the student's
source; the grader parses the log (never the student's own output, which could imitate it).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field

TOOLS = ("racecheck", "synccheck", "memcheck")

_LOCATION = re.compile(r"\bin (?P<path>\S+?):(?P<line>\d+)\b")
_HEADLINES = (
    re.compile(r"Race reported between (?P<what>.+?) at "),
    re.compile(r"(?P<what>(?:Potential )?(?:RAW|WAR|WAW) hazard detected)"),
    re.compile(r"(?P<what>Barrier error detected\.?.*)"),
    re.compile(r"(?P<what>Invalid __\w+__ (?:read|write|atomic) of size \d+ bytes)"),
    re.compile(r"(?P<what>Program hit .+)"),
)
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")


def executable() -> str | None:
    """Path of compute-sanitizer, or None when it is not installed."""
    for candidate in (shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer",
                      "/opt/nvidia/compute-sanitizer/compute-sanitizer"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def command(tool: str, log_file: str) -> list[str]:
    """The prefix that runs a command under ``tool``, writing its report to ``log_file``."""
    exe = executable()
    if exe is None:
        raise FileNotFoundError("compute-sanitizer is not installed")
    cmd = [exe, "--tool", tool, "--log-file", log_file, "--print-limit", "20",
           "--error-exitcode", "0"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "analysis"]
    return cmd


@dataclass
class Finding:
    """One reported problem and the lines of the student's source it names."""

    what: str
    lines: list[int] = field(default_factory=list)


@dataclass
class Report:
    """A parsed sanitizer log: ``count`` problems (errors plus racecheck warnings)."""

    tool: str
    count: int
    findings: list[Finding]


def parse(tool: str, text: str, source_path: str) -> Report:
    """Parse a compute-sanitizer log; lines are kept only where they are in ``source_path``."""
    findings: list[Finding] = []
    base = os.path.basename(source_path)
    for raw in text.splitlines():
        line = raw.lstrip("= ").rstrip()
        for pattern in _HEADLINES:
            m = pattern.search(line)
            if m:
                findings.append(Finding(m.group("what").strip()))
                break
        for loc in _LOCATION.finditer(line):
            if findings and (loc.group("path") == source_path
                             or os.path.basename(loc.group("path")) == base):
                n = int(loc.group("line"))
                if n not in findings[-1].lines:
                    findings[-1].lines.append(n)
    count = len(findings)
    race = _RACE_SUMMARY.search(text)
    if race:
        count = int(race.group(1)) + int(race.group(2))
    else:
        summary = _ERROR_SUMMARY.search(text)
        if summary:
            count = int(summary.group(1))
    return Report(tool, count, findings)
