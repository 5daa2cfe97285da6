"""Scores: a disguised copy ranks above independent honest kernels of one exercise, a copy of
the instructor's solution is found though it is the only one in the class, and what the
released skeleton gives everyone counts for nothing."""

from __future__ import annotations

from pathlib import Path

from autograder.similarity.run import compare
from autograder.similarity.score import THRESHOLD, Document
from autograder.similarity.skeleton import released_code
from autograder.similarity.tokens import token_stream

ROOT = Path(__file__).resolve().parents[2]
HONEST = [ROOT / "assignments/tiled_matmul/variants/grid_index.py",
          ROOT / "assignments/tiled_matmul/variants/lesson_tile16.py",
          ROOT / "assignments/tiled_matmul/variants/blockdim_loop.py",
          ROOT / "assignments/tiled_matmul/mutants/naive.py",
          ROOT / "benchmarks/similarity/written/tiled_matmul/rowmajor_flat.py",
          ROOT / "benchmarks/similarity/written/tiled_matmul/device_helper.py"]


def _doc(key, text, skeleton=None, archive=False):
    return Document(key, key, text, token_stream(text, skeleton), archive)


def _renamed(text: str) -> str:
    for old, new in [("sA", "left"), ("sB", "right"), ("tmp", "total"), ("tx", "a"),
                     ("ty", "b"), ("n =", "size ="), ("< n", "< size"), ("(n +", "(size +")]:
        text = text.replace(old, new)
    return "# my work\n" + text.replace("    ", "  ")


def _scores(docs):
    return {tuple(sorted((p.a.key, p.b.key))): p.score for p in compare(docs, None)}


def test_a_renamed_copy_ranks_above_every_independent_pair():
    texts = {p.stem: p.read_text() for p in HONEST}
    texts["copy"] = _renamed(texts["grid_index"])
    assert texts["copy"] != texts["grid_index"]
    scores = _scores([_doc(k, t) for k, t in texts.items()])
    copy = scores[("copy", "grid_index")]
    independent = [s for k, s in scores.items() if "copy" not in k]
    assert copy >= THRESHOLD
    assert copy > max(independent)
    assert max(independent) < THRESHOLD


def test_the_only_copy_of_the_solution_in_a_class_is_flagged_against_the_archive():
    solution = (ROOT / "solutions/tiled_matmul.py").read_text()
    docs = [_doc(p.stem, p.read_text()) for p in HONEST]
    docs.append(_doc("student", solution.replace("acc", "result").replace("tile_a", "ta")))
    docs.append(_doc("instructor:tiled_matmul.py", solution, archive=True))
    pairs = compare(docs, None)
    top = pairs[0]
    assert {top.a.key, top.b.key} == {"student", "instructor:tiled_matmul.py"}
    assert top.score >= THRESHOLD and top.b.archive
    assert top.a_lines and top.b_lines


def test_what_the_skeleton_gives_everyone_counts_for_nothing():
    """Two kernels in files that also hold the released setup cell, the imports and a helper
    the skeleton ships score as the kernels alone, and no matched line is the skeleton's;
    without the skeleton set aside, the shared cells raise the score."""
    skeleton = released_code("tiled_matmul") + '''

def show(C):
    print("first row:", C[0, :4], "last row:", C[-1, -4:], "shape:", C.shape)
    for r in range(C.shape[0]):
        if r % 100 == 0:
            print(r, C[r].sum(), C[r].max(), C[r].min())
'''
    given = skeleton.split("@cuda.jit")[0] + skeleton.split("raise NotImplementedError()")[1]
    kernels = [HONEST[0].read_text(), HONEST[3].read_text()]
    files = [given + "\n" + k for k in kernels]
    (bare,) = compare([_doc("a", kernels[0]), _doc("b", kernels[1])], None)
    (with_skeleton,) = compare([_doc("a", files[0], skeleton), _doc("b", files[1], skeleton)],
                               skeleton)
    (without,) = compare([_doc("a", files[0]), _doc("b", files[1])], None)
    assert abs(with_skeleton.score - bare.score) < 0.05
    first_own_line = len(given.split("\n")) + 1
    assert all(start >= first_own_line for start, _ in with_skeleton.a_lines)
    assert without.score > bare.score + 0.2


def test_a_pair_as_json_has_both_keys_a_score_and_line_ranges():
    text = HONEST[0].read_text()
    (pair,) = compare([_doc("x", text), _doc("y", _renamed(text))], None)
    d = pair.to_dict()
    assert {d["a"], d["b"]} == {"x", "y"}
    assert 0.0 <= d["score"] <= 1.0
    assert all(len(r) == 2 and r[0] <= r[1] for r in d["a_lines"] + d["b_lines"])


def test_the_instructors_versions_of_the_solution_are_one_source():
    """A copy of the solution is paired with the instructor once, through the version it
    matches best, and a second version of the solution in the archive (the run-time-bounds
    sibling) does not lower its score by making the solution's lines look common."""
    solution = (ROOT / "solutions/tiled_matmul.py").read_text()
    sibling = (ROOT / "solutions/tiled_matmul_blockdim.py").read_text()
    copy = solution.replace("acc", "result").replace("tile_a", "ta").replace("phase", "p")

    def run(archive):
        docs = [_doc(p.stem, p.read_text()) for p in HONEST] + [_doc("student", copy)]
        for key, text in archive:
            docs.append(_doc(key, text, archive=True))
            docs[-1].group = "instructor"
        return [p for p in compare(docs, None) if "student" in (p.a.key, p.b.key)
                and p.b.archive]

    alone = run([("instructor:tiled_matmul.py", solution)])
    both = run([("instructor:tiled_matmul.py", solution),
                ("instructor:tiled_matmul_blockdim.py", sibling)])
    assert len(both) == 1
    assert both[0].b.key == "instructor:tiled_matmul.py"
    assert both[0].score == alone[0].score >= THRESHOLD


def test_the_view_shades_definitions_and_marks_a_line_that_differs_in_part():
    """``row = ...`` read as its expression where it is used still shades its own line, and
    the phase loop whose bound a student changed is shaded as partly shared only."""
    from autograder.similarity.score import line_coverage

    solution = (ROOT / "solutions/tiled_matmul.py").read_text()
    changed = solution.replace("range((width + TILE_WIDTH - 1) // TILE_WIDTH)",
                               "range(width // TILE_WIDTH)")
    assert changed != solution
    docs = [_doc(p.stem, p.read_text()) for p in HONEST] + [_doc("a", solution),
                                                            _doc("b", changed)]
    (pair,) = [p for p in compare(docs, None) if {p.a.key, p.b.key} == {"a", "b"}]
    lines = changed.split("\n")
    row = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("row = "))
    loop = next(i for i, t in enumerate(lines, 1) if "range(width // TILE_WIDTH)" in t)
    sync = next(i for i, t in enumerate(lines, 1) if "cuda.syncthreads()" in t)
    doc = pair.a if pair.a.key == "b" else pair.b
    cover = line_coverage(doc, pair.shared)
    assert cover.get(row) is True and cover.get(sync) is True
    assert cover.get(loop) is False
