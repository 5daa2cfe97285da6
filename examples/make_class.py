"""Regenerate the example class: examples/submitted/<student>/<assignment>/<notebook>.ipynb.

    python examples/make_class.py            # rewrite examples/submitted and examples/class.json
    python examples/make_class.py --check    # exit 1 if the committed class is stale

Each student notebook is the *release* notebook of an assignment (made by nbgrader's
``generate_assignment`` from ``assignments/``, so solutions and hidden tests are gone) with the
student's code in the solution cell, the way a student hands it in: no outputs. The class covers
the mistakes the autograder must tell apart (see STUDENTS). Needs nbgrader (``.[nbgrader]``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.nbgrader import notebook as nbb  # noqa: E402
from autograder.nbgrader.course import assignment_names, build_course  # noqa: E402

OUT = ROOT / "examples" / "submitted"
MANIFEST = ROOT / "examples" / "class.json"

# ---------------------------------------------------------------------------------------------
# What each student wrote in the solution cell, per exercise.

TILED = {}
ANY = {}

TILED["alice"] = ("correct", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * cuda.blockDim.y + ty
    col = cuda.blockIdx.x * cuda.blockDim.x + tx
    n = A.shape[0]
    total = float32(0.0)
    for t in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        # load one element of each tile, 0 outside the matrix
        if row < n and t * TILE_WIDTH + tx < n:
            sA[ty, tx] = A[row, t * TILE_WIDTH + tx]
        else:
            sA[ty, tx] = 0.0
        if col < n and t * TILE_WIDTH + ty < n:
            sB[ty, tx] = B[t * TILE_WIDTH + ty, col]
        else:
            sB[ty, tx] = 0.0
        cuda.syncthreads()
        for j in range(TILE_WIDTH):
            total += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = total
''')

TILED["bob"] = ("the lecture's kernel without boundary checks: right only when width is a "
                "multiple of TILE_WIDTH", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    Mds = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    Nds = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    Row = by * TILE_WIDTH + ty
    Col = bx * TILE_WIDTH + tx
    Width = A.shape[0]
    Pvalue = float32(0.0)
    for ph in range(Width // TILE_WIDTH):
        Mds[ty, tx] = A[Row, ph * TILE_WIDTH + tx]
        Nds[ty, tx] = B[ph * TILE_WIDTH + ty, Col]
        cuda.syncthreads()
        for k in range(TILE_WIDTH):
            Pvalue += Mds[ty, k] * Nds[k, tx]
        cuda.syncthreads()
    C[Row, Col] = Pvalue
''')

TILED["carol"] = ("missing second barrier: a race between the next phase's loads and this "
                  "phase's reads", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    acc = float32(0.0)
    for phase in range((width + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < width and a_col < width else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < width and col < width else float32(0.0)
        cuda.syncthreads()  # wait until the tiles are loaded
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
    if row < width and col < width:
        C[row, col] = acc
''')

TILED["dave"] = ("naive kernel: right results, but no shared memory and no barriers", '''
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    col, row = cuda.grid(2)
    n = A.shape[0]
    if row < n and col < n:
        acc = 0.0
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
''')

TILED["erin"] = ("does not parse: a missing colon", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    acc = float32(0.0)
    for phase in range((width + TILE_WIDTH - 1) // TILE_WIDTH)
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < width and a_col < width else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < width and col < width else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < width and col < width:
        C[row, col] = acc
''')

TILED["frank"] = ("hangs: the kernel's phase loop never advances (an endless loop in the "
                  "kernel)", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    num_phases = (width + TILE_WIDTH - 1) // TILE_WIDTH
    acc = float32(0.0)
    phase = 0
    while phase < num_phases:
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < width and a_col < width else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < width and col < width else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < width and col < width:
        C[row, col] = acc
''')

ANY["alice"] = ("correct, with 8×8 tiles", '''
from numba import cuda, float32

TILE_WIDTH = 8


@cuda.jit
def matmul_any_size(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * cuda.blockDim.y + ty
    col = cuda.blockIdx.x * cuda.blockDim.x + tx
    m, n = A.shape
    k = B.shape[1]
    total = float32(0.0)
    for t in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = t * TILE_WIDTH + tx
        b_row = t * TILE_WIDTH + ty
        sA[ty, tx] = A[row, a_col] if (row < m and a_col < n) else float32(0.0)
        sB[ty, tx] = B[b_row, col] if (b_row < n and col < k) else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE_WIDTH):
            total += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = total
''')

ANY["bob"] = ("the lecture's square kernel without boundary checks: right only when m, n and k "
              "are multiples of TILE_WIDTH", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    Mds = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    Nds = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    bx, by = cuda.blockIdx.x, cuda.blockIdx.y
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    Row = by * TILE_WIDTH + ty
    Col = bx * TILE_WIDTH + tx
    n = A.shape[1]
    Pvalue = float32(0.0)
    for ph in range(n // TILE_WIDTH):
        Mds[ty, tx] = A[Row, ph * TILE_WIDTH + tx]
        Nds[ty, tx] = B[ph * TILE_WIDTH + ty, Col]
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            Pvalue += Mds[ty, i] * Nds[i, tx]
        cuda.syncthreads()
    C[Row, Col] = Pvalue
''')

ANY["carol"] = ("missing second barrier: a race between the next phase's loads and this "
                "phase's reads", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < m and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < k else float32(0.0)
        cuda.syncthreads()  # wait until the tiles are loaded
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
    if row < m and col < k:
        C[row, col] = acc
''')

ANY["dave"] = ("naive kernel with boundary checks: right results, but no shared memory and no "
               "barriers", '''
from numba import cuda

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        acc = 0.0
        for i in range(A.shape[1]):
            acc += A[row, i] * B[i, col]
        C[row, col] = acc
''')

ANY["erin"] = ("does not parse: unbalanced parentheses", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        tile_a[ty, tx] = A[row, phase * TILE_WIDTH + tx] if (row < m and (phase * TILE_WIDTH + tx < n) else 0.0
        tile_b[ty, tx] = B[phase * TILE_WIDTH + ty, col] if (phase * TILE_WIDTH + ty < n and col < k) else 0.0
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = acc
''')

ANY["frank"] = ("hangs: the phase counter only advances over full tiles, so a partial last tile "
                "loops forever inside the kernel", '''
from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    num_phases = (n + TILE_WIDTH - 1) // TILE_WIDTH
    phase = 0
    while phase < num_phases:
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < m and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < k else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
        if (phase + 1) * TILE_WIDTH <= n:
            phase += 1
    if row < m and col < k:
        C[row, col] = acc
''')

#: assignment folder → what each student put in its solution cell
STUDENTS = {"01_tiled_matmul": TILED, "02_matmul_any_size": ANY}


def release_notebooks(workdir: Path) -> dict[str, tuple[str, object]]:
    """``{assignment: (notebook file name, release notebook)}``, made by ``nbgrader
    generate_assignment`` in a course built under ``workdir``. Raises ``RuntimeError`` when
    nbgrader fails."""
    course = build_course(workdir / "course", device="sim")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    found = {}
    for name in assignment_names(course / "source"):
        run = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", name,
                              "--log-level=WARN"],
                             cwd=course, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{run.stderr}")
        (nb_path,) = sorted((course / "release" / name).glob("*.ipynb"))
        found[name] = (nb_path.name, nbb.read(nb_path))
    return found


def student_notebook(release, code: str):
    """A copy of ``release`` with ``code`` as the source of its solution cell."""
    nb = json.loads(nbb.dumps(release))  # deep copy
    nb = nbb.nbformat.from_dict(nb)
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = code.strip("\n")
    return nb


def class_files(releases: dict[str, tuple[str, object]]) -> dict[Path, str]:
    """``{path relative to examples/: file text}`` of the whole class and its manifest, from
    the release notebooks (as :func:`release_notebooks` returns them)."""
    files: dict[Path, str] = {}
    manifest: dict[str, dict] = {}
    for assignment, students in STUDENTS.items():
        nb_name, release = releases[assignment]
        for student, (what, code) in students.items():
            rel = Path("submitted") / student / assignment / nb_name
            files[rel] = nbb.dumps(student_notebook(release, code))
            manifest.setdefault(student, {})[assignment] = {"notebook": str(rel), "what": what}
    files[Path("class.json")] = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    return files


def make_class(workdir: Path) -> dict[Path, str]:
    """The class's files (see :func:`class_files`), with release notebooks made in ``workdir``."""
    return class_files(release_notebooks(workdir))


def main(argv: list[str]) -> int:
    check = "--check" in argv
    with tempfile.TemporaryDirectory(prefix="kernelgrade-class-") as tmp:
        files = make_class(Path(tmp))
    base = ROOT / "examples"
    if check:
        stale = [str(p) for p, text in files.items()
                 if not (base / p).exists() or (base / p).read_text(encoding="utf-8") != text]
        if stale:
            print("stale (run python examples/make_class.py):", ", ".join(stale))
            return 1
        return 0
    for p, text in files.items():
        (base / p).parent.mkdir(parents=True, exist_ok=True)
        (base / p).write_text(text, encoding="utf-8")
        print(f"wrote examples/{p}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
