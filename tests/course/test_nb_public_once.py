"""The public-test cell as a student reads it (issue 32, item 3): each finding once, no
traceback into the grader's code, the rule for races once, and ``nbgrader validate`` printing
the report it fails for. A real Jupyter kernel (nbclient) and a real ``nbgrader validate`` run
the notebook of ``tiled_matmul`` with its solution cell holding the kernel without its second
barrier. What the code prints is cut at a line start and says how many lines were left out.
"""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
from nbclient import NotebookClient

from autograder import exercises
from autograder.judge.cases import RACE_RULE, printed_tail
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.public import ERROR_COLUMNS, public_file_result

from .nbhelpers import ROOT, kernel_env, source_notebook

RACY = (ROOT / "assignments" / "tiled_matmul" / "mutants" / "missing_second_barrier.py").read_text()
#: the diagnostics' first race, word for word
FIRST_RACE = "RAW race on shared array tile_a (tile_a[0, 0])"


def racy_notebook():
    """tiled_matmul's notebook up to its public-test cell, its solution cell the racy kernel."""
    nb = source_notebook("tiled_matmul")
    last = next(i for i, c in enumerate(nb.cells)
                if c.cell_type == "code" and "run_public_tests" in c.source)
    nb.cells = nb.cells[:last + 1]
    [cell] = list(nbb.cells_with(nb, solution=True))
    cell.source = RACY
    return nb


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_public_cell_says_each_finding_once_with_no_traceback(tmp_path):
    nb = racy_notebook()
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=kernel_env())
    cell = nb.cells[-1]
    assert [o.output_type for o in cell.outputs] == ["error"], cell.outputs  # the report, once
    [error] = cell.outputs
    assert error.ename == "PublicTestsFailed"
    shown = "\n".join(error.traceback)
    assert "Traceback" not in shown and "public.py" not in shown and "File " not in shown, shown
    assert shown.startswith("Public tests of tiled_matmul"), shown
    assert all(len(line) <= ERROR_COLUMNS for line in error.traceback), shown
    text = flat(shown)
    assert text.count(FIRST_RACE) == 1, shown
    assert text.count(flat(RACE_RULE)) == 1, shown
    assert "see diagnostic: shared-memory races below" in text, shown  # the concept points there
    assert "no barrier between" not in text, shown
    assert "0 of 2 public tests passed" in text
    # the notebook's own text before the cell says what a failure shows, as it shows it
    said = flat(nb.cells[-2].source)
    assert "see the report" not in said, said
    promised = re.search(r"`1 of (\d+) public tests passed\. \.\.\.`", said)
    last = max(i for i, line in enumerate(error.traceback) if not line.startswith(" "))
    assert promised and flat(" ".join(error.traceback[last:])).startswith(
        f"0 of {promised[1]} public tests passed. "), said  # the error's last line, as quoted


def test_validate_prints_the_report_it_fails_for(tmp_path):
    path = tmp_path / "tiled_matmul.ipynb"
    path.write_text(nbformat.writes(racy_notebook()), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)],
                         cwd=tmp_path, env=kernel_env(), capture_output=True, text=True,
                         timeout=600)
    out = run.stdout
    assert "VALIDATION FAILED ON 1 CELL(S)!" in out, out + run.stderr
    assert "see the report" not in out, out
    assert "Public tests of tiled_matmul" in out and FIRST_RACE in flat(out), out
    assert "[FAILED] width 16: counted as failed" in out, out
    assert "[FAILED] concept: tiles of A and B go through shared memory" in out, out
    assert "..." not in out.split("The error was:")[1], out  # no line cut at 90 columns


PRINTING = '''from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    print("thread", tid, "of block", cuda.blockIdx.x, "has its element")
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
'''
LINE = re.compile(r"^thread \d+ of block \d+ has its element$")


def test_what_the_code_printed_starts_at_a_line_and_says_how_many_were_left_out(tmp_path):
    path = tmp_path / "printing.py"
    path.write_text(PRINTING, encoding="utf-8")
    result = public_file_result(path, "block_sum", device="sim")
    [note] = [n for n in result.notes if n.startswith("your code printed:")]
    head, count, *lines = note.split("\n")
    assert re.fullmatch(r"\((\d+) earlier lines not shown\)", count), note[:300]
    assert lines and all(LINE.match(line) for line in lines), note[:300]
    assert int(count[1:].split()[0]) > 100


def test_printed_tail_keeps_whole_lines():
    text = "".join(f"line {n}\n" for n in range(1, 401))
    tail = printed_tail(text, 400, limit=100)
    first, *rest = tail.split("\n")
    assert first == f"({400 - len(rest)} earlier lines not shown)"
    assert rest[-1] == "line 400" and all(re.fullmatch(r"line \d+", r) for r in rest)
    assert printed_tail("only\n\n", 2) == "only"  # a blank line is not a line left out
    assert printed_tail(text[-30:], 400, limit=1000).startswith("(396 earlier lines not shown)")
