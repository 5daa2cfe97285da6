"""Labelled benchmark of `autograder similarity` beside copydetect's plain winnowing.

    .venv/bin/python benchmarks/similarity/run.py [--out benchmarks/results/DATE_similarity.md]

Per exercise, the class is made of independent honest solutions (the instructor's textbook
variants, the known-bad files that are their own work: those less than 0.7 alike to the
solution and to every other file kept, by difflib on the code without docstrings; and kernels written for this
benchmark in other styles, benchmarks/similarity/written/) and disguised copies made from some
of them (and from the instructor's solution, which is in the archive: a leaked solution) by the
edits of transforms.py, two to four at a time, one a copy of a copy, one a notebook, one a
fragment of two sources. The archive is the instructor's solutions (solutions/<exercise>*.py),
one source as `autograder similarity` takes them (the group "instructor"): each class file
makes one pair with it, through the solution file it matches best.

A pair is a copy when the two files share a source. The instructor's `<exercise>_blockdim.py`
is `<exercise>.py` with one or two lines changed (its loop bounds read from cuda.blockDim), so
the two are one source. By the same standard, a candidate honest file that is an instructor
file but for at most two changed lines (difflib on the lines of the code without docstrings)
is that file edited, not its author's own work, and is left out as the mutants like the
solution are: block_sum's variants/blockdim_loop.py is solutions/block_sum_blockdim.py with
one index expression changed (both written in issue 22, the second as the timing reference of
the first's style), and was labelled independent of it. Every class-class pair and every
class-instructor pair is scored; precision and recall at the default threshold, ROC AUC, and
how many independent pairs score at or above the weakest copy are reported.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import transforms as tf  # noqa: E402

from autograder.similarity.classfolder import _document  # noqa: E402
from autograder.similarity.run import compare  # noqa: E402
from autograder.similarity.score import THRESHOLD  # noqa: E402
from autograder.similarity.skeleton import released_code  # noqa: E402

EXERCISES = ["tiled_matmul", "transpose", "block_sum"]

#: The disguised copies of each exercise: (name, source, edits). A source is an honest file's
#: name, "solution" (the instructor's, in the archive) or an earlier copy's name.
COPIES = [
    ("c_sol_rename", "solution", ["rename", "comments"]),
    ("c_sol_loop", "solution", ["loop", "reorder", "rename", "constant"]),
    ("c_var_reindent", "variant0", ["reindent", "comments", "rename"]),
    ("c_var_dead", "variant1", ["dead_code", "rename", "reorder"]),
    ("c_own_bug", "own0", ["bug", "rename", "comments"]),
    ("c_own_const", "own1", ["constant", "loop", "reindent"]),
    ("c_copy_of_copy", "c_sol_rename", ["reorder", "dead_code", "rename"]),
    ("c_notebook", "own0", ["rename", "notebook"]),
    ("c_fragment", "fragment:solution+own1", ["rename"]),
]


#: An honest file at most this many changed lines from an instructor file is that file edited
#: (the instructor's own `<exercise>_blockdim.py` is 1-2 lines from `<exercise>.py`).
EDITED_LINES = 2


def _code(text: str) -> str:
    return ast.unparse(tf._strip(text))


def changed_lines(a: str, b: str) -> int:
    """How many lines of code (docstrings left out) differ between two files' texts."""
    sm = difflib.SequenceMatcher(None, _code(a).splitlines(), _code(b).splitlines())
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in sm.get_opcodes()
               if tag != "equal")


def honest_files(exercise: str) -> dict[str, str]:
    """name -> text of the independent honest files of ``exercise`` (see the module)."""
    folder = ROOT / "assignments" / exercise
    solution = _code((ROOT / "solutions" / f"{exercise}.py").read_text())
    instructor = [p.read_text() for p in sorted((ROOT / "solutions").glob(f"{exercise}*.py"))]
    kept: dict[str, str] = {}
    candidates = sorted((folder / "variants").glob("*.py")) + \
        sorted((Path(__file__).parent / "written" / exercise).glob("*.py")) + \
        sorted((folder / "mutants").glob("*.py"))
    for p in candidates:
        text = p.read_text()
        code = _code(text)
        if p.parent.name == "mutants" and difflib.SequenceMatcher(
                None, code, solution).ratio() >= 0.7 or p.parent.name == "mutants" and any(
                difflib.SequenceMatcher(None, code, _code(t)).ratio() >= 0.7
                for t in kept.values()):
            continue
        if any(changed_lines(text, t) <= EDITED_LINES for t in instructor):
            continue  # an instructor file edited (see the module)
        kind = p.parent.name if p.parent.name in ("variants", "mutants") else "written"
        kept[f"{kind}_{p.stem}"] = text
    return kept


def build(exercise: str, where: Path, seed: int = 1) -> tuple[list, dict[str, set[str]]]:
    """The class and archive files of ``exercise`` written under ``where``; returns
    ``(paths with archive flags, origins per document key)``."""
    rng = random.Random(seed)
    honest = honest_files(exercise)
    variants = [n for n in honest if n.startswith("variants_")]
    own = [n for n in honest if n.startswith("written_")]
    alias = {"variant0": variants[0], "variant1": variants[-1], "own0": own[0], "own1": own[-1]}
    archive = {p.stem: p.read_text() for p in sorted((ROOT / "solutions").glob(f"{exercise}*.py"))}
    texts = dict(honest)
    origins = {n: {n} for n in honest}
    for name in archive:
        # <exercise>_blockdim.py is the solution with run-time loop bounds: one family
        origins["archive:" + name] = {"solution"}
    src_text = {**{n: t for n, t in honest.items()}, "solution": archive[exercise]}
    for name, source, edits in COPIES:
        if source.startswith("fragment:"):
            a, b = source.split(":")[1].split("+")
            b = alias.get(b, b)
            text = tf.fragment(src_text[a], src_text[b])
            origin = {"solution" if a == "solution" else a, b}
        else:
            source = alias.get(source, source)
            text = src_text[source]
            origin = set(origins[source]) if source in origins else {source}
        as_notebook = False
        for e in edits:
            if e == "notebook":
                as_notebook = True
            else:
                text = tf.TRANSFORMS[e](text, rng)
        src_text[name] = text
        origins[name] = origin
        texts[name + (".ipynb" if as_notebook else "")] = tf.notebook(text) if as_notebook \
            else text
    out = []
    (where / "class").mkdir(parents=True)
    (where / "archive").mkdir()
    for n, t in texts.items():
        p = where / "class" / (n if n.endswith(".ipynb") else n + ".py")
        p.write_text(t)
        out.append((n.removesuffix(".ipynb"), p, False))
    for n, t in archive.items():
        p = where / "archive" / (n + ".py")
        p.write_text(t)
        out.append(("archive:" + n, p, True))
    return out, origins


def _auc(pos: list[float], neg: list[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg)) if pos and neg else float("nan")


def _metrics(scores: dict[tuple[str, str], float], labels: dict[tuple[str, str], bool],
             threshold: float) -> dict:
    pos = [scores[k] for k in labels if labels[k]]
    neg = [scores[k] for k in labels if not labels[k]]
    tp = sum(s >= threshold for s in pos)
    fp = sum(s >= threshold for s in neg)
    weakest = min(pos)
    return {"copies": len(pos), "independent": len(neg), "auc": _auc(pos, neg),
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / len(pos), "flagged_honest": fp,
            "above_weakest": sum(s >= weakest for s in neg),
            "weakest_copy": weakest, "strongest_independent": max(neg)}


def plain_winnowing(files) -> dict[tuple[str, str], float]:
    """copydetect's own tokenizer and winnowing at its defaults (k = 25, window 1), on the
    files as they are (a notebook: its code cells), scored by the larger of its two
    similarities (what its report sorts by)."""
    from copydetect import CodeFingerprint, compare_files
    from autograder.source.submission import load_source
    import io
    fps = {}
    for key, path, _ in files:
        code = load_source(path).text
        fps[key] = CodeFingerprint(str(path.with_suffix(".py")), 25, 1, fp=io.StringIO(code))
    out: dict[tuple[str, str], float] = {}
    keys = [k for k, _, _ in files]
    archive = {k for k, _, a in files if a}
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if a in archive and b in archive:
                continue
            _, sims, _ = compare_files(fps[a], fps[b])
            key = _pair(a, b)
            out[key] = max(out.get(key, 0.0), float(max(sims)))
    return out


def _pair(a: str, b: str) -> tuple[str, str]:
    """The key of a pair, the instructor's files as one ("instructor")."""
    return tuple(sorted("instructor" if k.startswith("archive:") else k for k in (a, b)))


def run_exercise(exercise: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        files, origins = build(exercise, Path(tmp))
        skeleton = released_code(exercise)
        docs = [_document(k, p, skeleton, a) for k, p, a in files]
        for d in docs:
            if d.archive:
                d.group = "instructor"
        started = time.perf_counter()
        pairs = compare(docs, skeleton)
        seconds = time.perf_counter() - started
        ours = {_pair(p.a.key, p.b.key): p.score for p in pairs}
        plain = plain_winnowing(files)
    origins["instructor"] = set().union(*(o for k, o in origins.items()
                                          if k.startswith("archive:")))
    labels = {k: bool(origins[k[0]] & origins[k[1]]) for k in plain}
    ours = {k: ours.get(k, 0.0) for k in labels}
    worst = sorted(((ours[k], k) for k in labels if not labels[k]), reverse=True)[:3]
    weakest = sorted((ours[k], k) for k in labels if labels[k])[:3]
    return {"ours": _metrics(ours, labels, THRESHOLD), "plain": _metrics(plain, labels, 0.5),
            "seconds": seconds, "top_independent": worst, "weakest_copies": weakest,
            "files": len([f for f in files if not f[2]])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = [f"# Similarity benchmark, {datetime.date.today()}", "",
             f"`python benchmarks/similarity/run.py` on this checkout. Default threshold "
             f"{THRESHOLD}; copydetect's plain winnowing flagged at 0.5.", "",
             "| exercise | files | copy / independent pairs | method | ROC AUC | precision | "
             "recall | honest flagged | independent >= weakest copy | weakest copy | "
             "strongest independent |", "| --- " * 11 + "|"]
    details = []
    for ex in EXERCISES:
        r = run_exercise(ex)
        for method in ("ours", "plain"):
            m = r[method]
            lines.append(
                f"| {ex} | {r['files']} | {m['copies']} / {m['independent']} | "
                f"{'kernel-aware' if method == 'ours' else 'plain winnowing'} | {m['auc']:.3f} | "
                f"{m['precision']:.2f} | {m['recall']:.2f} | {m['flagged_honest']} | "
                f"{m['above_weakest']} | {m['weakest_copy']:.3f} | "
                f"{m['strongest_independent']:.3f} |")
        details.append(f"- {ex}: scoring {r['seconds']:.3f} s; top independent pairs "
                       f"{[(round(s, 3), k) for s, k in r['top_independent']]}; weakest copies "
                       f"{[(round(s, 3), k) for s, k in r['weakest_copies']]}")
    text = "\n".join(lines + [""] + details) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
