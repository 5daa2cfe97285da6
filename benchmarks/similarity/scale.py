"""How long `autograder similarity` takes on a class of N submissions of one exercise.

    .venv/bin/python benchmarks/similarity/scale.py [--students 300] [--exercise tiled_matmul]

The class is a flat folder of N `.py` files made from the benchmark's honest files of the
exercise (run.honest_files) by two to four of the students' edits each (transforms.py), a
tenth of them as notebooks: every file differs from every other, as in a real class. It runs
the command as an instructor does (`autograder similarity DIR -e EXERCISE --html OUT`, in a
child process of this interpreter) and prints the wall-clock and CPU time of that process.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402
import transforms as tf  # noqa: E402

EDITS = ["rename", "reorder", "reindent", "comments", "constant", "loop", "dead_code", "bug"]


def build_class(folder: Path, exercise: str, students: int, seed: int = 3) -> None:
    """Write ``students`` files into ``folder`` (see the module)."""
    rng = random.Random(seed)
    sources = list(bench.honest_files(exercise).values())
    folder.mkdir(parents=True)
    for n in range(students):
        text = sources[n % len(sources)]
        for edit in rng.sample(EDITS, rng.randint(2, 4)):
            text = tf.TRANSFORMS[edit](text, rng)
        if n % 10 == 9:
            (folder / f"s{n:03d}.ipynb").write_text(tf.notebook(text))
        else:
            (folder / f"s{n:03d}.py").write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--exercise", default="tiled_matmul")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        build_class(folder, args.exercise, args.students)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "autograder.cli", "similarity",
                               str(folder), "-e", args.exercise, "--html",
                               str(Path(tmp) / "view")], capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(done.stdout + done.stderr)
        head = [ln for ln in done.stdout.splitlines() if ln.startswith(args.exercise + ":")]
        pages = len(list((Path(tmp) / "view").glob(f"{args.exercise}-*.html")))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{args.students} submissions of {args.exercise}: {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"(one process); {head[0] if head else ''}; {pages} pair pages")


if __name__ == "__main__":
    main()
