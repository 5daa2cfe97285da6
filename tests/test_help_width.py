"""Help is readable at 80 columns (issue 32, item 15): every command's ``--help`` in a terminal
or a pipe 80 wide shows every option's name whole (``--allow-provisional``, not
``--allow-provisio…``) and every environment variable's name whole, in lines of at most 80
characters."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from autograder import settings
from autograder.cli import app
from conftest import ROOT

WIDTH = 80


def _commands(group, path: tuple[str, ...] = ()):
    """``(path, command)`` of the CLI's every command, groups included, depth first."""
    yield path, group
    if hasattr(group, "commands"):  # a group (typer has its own click)
        for name, command in sorted(group.commands.items()):
            yield from _commands(command, path + (name,))


COMMANDS = list(_commands(typer.main.get_command(app)))
VARIABLES = {v.name for v in settings.VARIABLES}


def _check(text: str, command) -> None:
    long = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not long, f"lines wider than {WIDTH}:\n" + "\n".join(long)
    assert "…" not in text, text
    for param in command.params:
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), \
                    f"{name} is not shown whole:\n{text}"
    for found in re.findall(r"KERNELGRADE_\w*", text):
        assert found in VARIABLES, f"${found} is cut:\n{text}"


@pytest.mark.parametrize("path, command", COMMANDS, ids=[" ".join(p) or "autograder"
                                                         for p, _ in COMMANDS])
def test_every_commands_help_shows_every_name_whole_at_80_columns(path, command):
    out = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)},
                             terminal_width=WIDTH)
    assert out.exit_code == 0, out.output
    _check(out.output, command)


def test_help_in_a_pipe_80_wide():
    """The installed command's way: a separate process, its output a pipe, COLUMNS=80."""
    env = dict(os.environ, COLUMNS=str(WIDTH))
    env.pop("TERMINAL_WIDTH", None)
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "course", "build", "--help"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    command = typer.main.get_command(app).commands["course"].commands["build"]
    _check(run.stdout, command)
    assert "--allow-provisional" in run.stdout and "$KERNELGRADE_SOLUTIONS" in run.stdout
