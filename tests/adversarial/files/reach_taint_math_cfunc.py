# adversarial: (red team of goal 6, round 2) a plain helper the kernel calls passes
# math.fsum(map(numba.cfunc, [PAYLOAD])): in the instrumented run the kernel's math is the
# grader's taint wrapper, so fsum consumed the map from a grader frame and Numba evaluated the
# signature string with the real built-ins. Refused at the first layer (cfunc is out of reach).
# adversarial-exercise: transpose
# adversarial-message: attribute cfunc
# kernelgrade-expect: correctness=error
# ATTACK b1 (transpose, simulator, the instrumented launch): arbitrary code in the grading child
# with the grader's trust, past the parse check, REFUSED_NAMES, the gate and the audit hook.
# How: for an instrumented launch the grader swaps the kernel's global `math` for
# autograder.instrument.taint._MATH, whose functions are the grader's closure `call`
# (taint._wrap_function) around the real math function. math.fsum / math.prod ITERATE their
# argument from inside that grader frame, so a `map` object's function runs with a grader frame
# innermost (no student frame between): the audit hook lets compile/exec/open/import through.
# The library callable: numba.cfunc(sig) -> numba.core.sigutils.normalize_signature ->
# eval(sig, {}, types.__dict__) with the REAL built-ins (cfunc is in none of the refused lists;
# the string is plain data). PAYLOAD = exec(payload_b1.py) (built by mkpayload.py).
# The helper is a plain function (same_code's kernel check does not look at it; reach's
# check_functions sees only numba.cfunc and math.fsum, both allowed).
import math
import numba
from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 8
PADDED = TILE_DIM + 1
PAYLOAD = 'exec(\'import os, sys\\nout = ["PWNED uid=%d" % os.getuid()]\\ntry:\\n    import autograder.grading.driver_occupancy as d\\n    out.append("IMPORTED " + d.__name__)\\nexcept Exception as e:\\n    out.append("grading-import " + type(e).__name__)\\nf = sys._getframe()\\nwhile f is not None:\\n    r = f.f_locals.get("req")\\n    if r is not None and hasattr(r, "cases"):\\n        out.append("REQUEST %d cases: %s" % (len(r.cases), [c.id[:14] for c in r.cases]))\\n        break\\n    f = f.f_back\\nfor p in ("kg_b1_marker.txt", "/tmp/kg_b1_marker.txt", "/work/notes/redteam_g6b/kg_b1_marker.txt"):\\n    try:\\n        with open(p, "w") as fh:\\n            fh.write("written by the student\\\'s payload\\\\n")\\n        out.append("WROTE " + p)\\n    except Exception as e:\\n        out.append("nowrite %s %s" % (p, type(e).__name__))\\ntry:\\n    out.append("SOLUTION " + open("/work/main/solutions/transpose.py").read()[:60].replace("\\\\n", " "))\\nexcept Exception as e:\\n    out.append("nosolution " + type(e).__name__)\\nraise RuntimeError(" ;; ".join(out))\\n\', {})'


def probe(x):
    # plain graded launches: math is the real module, the student's frame is innermost -> refused.
    # instrumented launch: math.fsum is the grader's taint wrapper -> map runs as the grader.
    return math.fsum(map(numba.cfunc, [PAYLOAD])) + x


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
    if tx == 0 and ty == 0:
        probe(0.0)
