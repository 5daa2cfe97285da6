"""The canonical token stream: the edits that disguise a copy change nothing, and a different
kernel stays different."""

from __future__ import annotations

from autograder.similarity.tokens import token_stream

KERNEL = '''
from numba import cuda, float32
TILE = 16

@cuda.jit
def k(A, B, C):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for i in range(A.shape[0]):
        acc += A[row, i] * B[i, col]
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
'''

DISGUISED = '''
from numba import cuda, float32
SIZE = 32  # another constant

@cuda.jit
def k(X, Y, Z):
    # my own comment
    c = cuda.threadIdx.x
    if False:
        c = 0
    r_ = cuda.threadIdx.y
    unused = r_ * 7
    r = r_ + SIZE * cuda.blockIdx.y
    cc = SIZE * cuda.blockIdx.x + c
    s = 0.0
    j = 0
    while j < X.shape[0]:
        s = s + X[r, j] * Y[j, cc]
        j += 1
    if cc < Z.shape[1] and Z.shape[0] > r:
        Z[r, cc] = s
'''


def test_a_disguised_copy_has_the_same_stream():
    """Renaming, a constant changed, comments, dead code, a while loop for the for loop,
    commuted index arithmetic and a swapped comparison leave the stream as it was."""
    assert token_stream(DISGUISED).kinds == token_stream(KERNEL).kinds


def test_independent_statements_in_either_order_are_one_stream():
    swapped = KERNEL.replace("    tx = cuda.threadIdx.x\n    ty = cuda.threadIdx.y\n",
                             "    ty = cuda.threadIdx.y\n    tx = cuda.threadIdx.x\n")
    assert swapped != KERNEL
    assert token_stream(swapped).kinds == token_stream(KERNEL).kinds


def test_cuda_grid_reads_as_its_expansion():
    grid = KERNEL.replace("    row = cuda.blockIdx.y * TILE + ty\n    col = cuda.blockIdx.x * TILE + tx\n",
                          "    col, row = cuda.grid(2)\n")
    spelled = grid.replace("col, row = cuda.grid(2)",
                           "row = cuda.blockIdx.y * cuda.blockDim.y + ty\n"
                           "    col = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x")
    assert token_stream(grid).kinds == token_stream(spelled).kinds


def test_a_changed_algorithm_changes_the_stream():
    transposed = KERNEL.replace("A[row, i] * B[i, col]", "A[i, row] * B[i, col]")
    assert token_stream(transposed).kinds != token_stream(KERNEL).kinds


def test_code_that_does_not_parse_still_has_tokens_and_lines():
    t = token_stream("def k(A):\n    x = A[0\n    return x\n")
    assert len(t) > 3 and set(t.lines) <= {1, 2, 3}
