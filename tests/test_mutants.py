"""``autograder mutants``: the mutation operators on small sources, the verdicts, the list of
equivalent mutants, and the command end to end on ``occupancy`` and one kernel exercise."""

from __future__ import annotations

import ast
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from autograder import exercises
from autograder.cli import app
from autograder.mutation import equivalent, run
from autograder.mutation.operators import OPERATORS, mutants

from conftest import ROOT, TEST_DEVICE


def _by_id(source: str, operator: str | None = None) -> dict[str, str]:
    """Mutant id -> the one line that differs from ``source`` (stripped)."""
    found = {}
    for m in mutants(source, [operator] if operator else None):
        old, new = source.splitlines(), m.source.splitlines()
        assert len(old) == len(new), m.id
        changed = [b.strip() for a, b in zip(old, new) if a != b]
        assert len(changed) == 1, (m.id, changed)
        assert m.line == int(m.id.split("-")[0][1:])
        found[m.id] = changed[0]
    return found


def _body(*lines: str) -> str:
    """A module with a constant and a decorated function whose body is ``lines``."""
    return "LIMIT = 3\n\n\n@decorate(1)\ndef f(a, b, A, n=2):\n" + \
        "".join(f"    {line}\n" for line in lines)


@pytest.mark.parametrize("operator, line, expected", [
    ("relop", "if a < b and a >= 0 and a != b: pass",
     {"L6-relop-lt-le-1": "if a <= b and a >= 0 and a != b: pass",
      "L6-relop-ge-gt-1": "if a < b and a > 0 and a != b: pass",
      "L6-relop-ne-eq-1": "if a < b and a >= 0 and a == b: pass"}),
    ("relop", "return a > b == 1 <= a",
     {"L6-relop-gt-ge-1": "return a >= b == 1 <= a", "L6-relop-eq-ne-1": "return a > b != 1 <= a",
      "L6-relop-le-lt-1": "return a > b == 1 < a"}),
    ("boolop", "return (a or b) and (b  and  a)",
     {"L6-boolop-and-or-1": "return (a or b) or (b  and  a)",
      "L6-boolop-or-and-1": "return (a and b) and (b  and  a)",
      "L6-boolop-and-or-2": "return (a or b) and (b  or  a)"}),
    ("sync", "cuda.syncthreads()  # keep",
     {"L6-sync-syncthreads-1": "pass  # keep"}),
    ("sync", "threadfence_block()", {"L6-sync-threadfence_block-1": "pass"}),
    ("guard", "if (a < b): return 1", {"L6-guard-if-1": "if (True): return 1"}),
    ("guard", "return A[a] if a < n else (0 if b else 1)",
     {"L6-guard-ifexp-1": "return A[a]", "L6-guard-ifexp-2": "return A[a] if a < n else (0)"}),
    ("axis", "i = cuda.threadIdx.x + cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.z",
     {"L6-axis-threadIdx-x-y-1":
      "i = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.z",
      "L6-axis-blockIdx-y-x-1":
      "i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.z"}),
    ("int", "return A[0] * 16 - 1.5",
     {"L6-int-plus-1": "return A[1] * 16 - 1.5", "L6-int-minus-1": "return A[-1] * 16 - 1.5",
      "L6-int-plus-2": "return A[0] * 17 - 1.5", "L6-int-minus-2": "return A[0] * 15 - 1.5"}),
    ("augadd", "a += b; a -= b", {"L6-augadd-assign-1": "a = b; a -= b"}),
    ("index", "A[a, b + 1] = A[(b), a:n] + A[a][b]",
     {"L6-index-swap-1": "A[b + 1, a] = A[(b), a:n] + A[a][b]",
      "L6-index-swap-2": "A[a, b + 1] = A[a:n, (b)] + A[a][b]"}),
    ("floordiv", "a //= b // 2", {"L6-floordiv-div-1": "a /= b // 2",
                                  "L6-floordiv-div-2": "a //= b / 2"}),
    ("minmax", "return min(a, max(b, n))", {"L6-minmax-min-max-1": "return max(a, max(b, n))",
                                            "L6-minmax-max-min-1": "return min(a, min(b, n))"}),
])
def test_each_operator_makes_its_one_edit(operator, line, expected):
    assert _by_id(_body(line), operator) == expected


def test_module_level_code_decorators_and_defaults_are_never_mutated():
    source = _body("return a")
    assert mutants(source) == []
    source = "X = 1 if Y < 2 else 3\n\nclass C:\n    K = 4\n\n    def g(self):\n        return 5\n"
    assert _by_id(source) == {"L7-int-plus-1": "return 6", "L7-int-minus-1": "return 4"}


def test_ids_stay_when_other_lines_change_and_positions_count_characters():
    source = _body("x = 'é€' if a < b else 0  # ü", "return x")
    ids = _by_id(source)
    assert ids["L6-relop-lt-le-1"] == "x = 'é€' if a <= b else 0  # ü"
    assert ids["L6-guard-ifexp-1"] == "x = 'é€'  # ü"
    edited = source.replace("return x", "return x  # another comment").replace("LIMIT = 3",
                                                                              "LIMIT = 4")
    assert _by_id(edited).keys() == ids.keys()
    assert [m.id for m in mutants(source)] == [m.id for m in mutants(source)]


def test_a_mutant_equal_to_the_source_or_to_an_earlier_mutant_is_left_out():
    got = _by_id(_body("return A[a, a] + min(a, a)"))
    assert not any("index" in k for k in got)
    assert "L6-minmax-min-max-1" in got  # min(a, a) -> max(a, a) is equivalent, but a new file


def test_an_unknown_operator_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown mutation operator.*nope.*known: relop"):
        mutants("def f():\n    return 1\n", ["nope"])


@pytest.mark.parametrize("name", exercises.names())
def test_every_solution_gives_valid_distinct_mutants_of_its_functions_only(name):
    source = exercises.solution_path(name).read_text(encoding="utf-8")
    found = mutants(source)
    assert len(found) >= 5
    assert len({m.id for m in found}) == len(found)
    assert len({m.source for m in found}) == len(found)

    def module_level(src):
        return [ast.dump(s) for s in ast.parse(src).body
                if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]

    for m in found:
        assert m.operator in OPERATORS and m.description.startswith(f"line {m.line} (")
        assert module_level(m.source) == module_level(source), m.id


def test_the_equivalence_list_is_toml_with_a_reason_for_each_id(tmp_path):
    good = tmp_path / "equivalent.toml"
    good.write_text('# why each is equivalent\nL3-int-plus-1 = "x.shape[-1] is x.shape[0]"\n')
    assert equivalent.load(good) == {"L3-int-plus-1": "x.shape[-1] is x.shape[0]"}
    assert equivalent.load(tmp_path / "none.toml") == {}
    for text in ('L3-int-plus-1 = ""\n', "L3-int-plus-1 = 3\n", "L3-int-plus-1 =\n"):
        good.write_text(text)
        with pytest.raises(ValueError, match=str(good)):
            equivalent.load(good)
    for name in exercises.names():  # each exercise's list names mutants of its solution
        ids = {m.id for m in mutants(exercises.solution_path(name).read_text(encoding="utf-8"))}
        assert set(equivalent.load(equivalent.path(name))) <= ids, name


def _result(*tests):
    return {"score": sum(t[2] for t in tests), "max_score": sum(t[3] for t in tests),
            "pending_points": sum(t[3] for t in tests if t[1] == "skipped"),
            "tests": [{"name": n, "status": s, "points": p, "max_points": mx, "message": "m"}
                      for n, s, p, mx in tests]}


def test_a_result_is_killed_survived_or_not_judged():
    assert run.classify(_result(("a", "passed", 5, 5), ("b", "failed", 0, 5)))[0] == run.KILLED
    assert run.classify(_result(("a", "passed", 4, 5)))[0] == run.KILLED
    assert run.classify(_result(("a", "passed", 5, 5), ("t", "skipped", 0, 25)))[0] \
        == run.NOT_JUDGED
    verdict, why = run.classify(_result(("a", "passed", 5, 5), ("race", "failed", 0, 0)))
    assert verdict == run.SURVIVED and "race: failed" in why  # a diagnostic costs no points


def test_the_analysis_checks_the_list_of_equivalent_mutants():
    chosen = mutants(_body("return A[a] if a < n else 0", "return 1"))
    ids = [m.id for m in chosen]
    full, pending = _result(("a", "passed", 5, 5)), _result(("a", "passed", 5, 5),
                                                            ("t", "skipped", 0, 5))
    killed = _result(("a", "failed", 0, 5))
    results = {ids[0]: full, ids[1]: full, ids[2]: killed, ids[3]: pending, ids[4]: pending}
    listed = {ids[1]: "same", ids[2]: "wrongly listed", ids[4]: "same", "L1-gone-1": "old"}
    got = run.analyse("f", chosen, listed, results, {ids[5]: "boom"}, "sim")
    assert [o.verdict for o in got.outcomes] == [
        run.SURVIVED, run.EQUIVALENT, run.KILLED, run.NOT_JUDGED, run.EQUIVALENT, run.NOT_GRADED]
    assert got.failed and got.to_dict()["unlisted_survivors"] == [ids[0]]
    assert len(got.warnings) == 2 and "L1-gone-1" in got.warnings[0] \
        and ids[2] in got.warnings[1]
    strict = run.analyse("f", chosen, listed, results, {}, "sim", strict=True)
    assert strict.outcomes[3].verdict == run.SURVIVED


def test_a_kept_folder_forgets_results_of_changed_mutants_and_of_the_other_device(tmp_path):
    from autograder.batch.store import ResultStore

    chosen = mutants(_body("return a < b", "return 1"))
    store = ResultStore(tmp_path / run.STORE)
    for m, device in zip(chosen, ["sim", "sim", "gpu:NVIDIA H200", "sim"]):
        store.save(f"{m.id}/f", m.id, {"exercise": "f", "submission": m.id, "score": 1,
                                       "max_score": 1, "provisional": False, "device": device})
    store.close()
    run._forget_stale(tmp_path, chosen, "sim")  # the first run: no manifest, all forgotten
    assert not ResultStore(tmp_path / run.STORE).rows()
    store = ResultStore(tmp_path / run.STORE)
    for m, device in zip(chosen, ["sim", "sim", "gpu:NVIDIA H200", "sim"]):
        store.save(f"{m.id}/f", m.id, {"exercise": "f", "submission": m.id, "score": 1,
                                       "max_score": 1, "provisional": False, "device": device})
    store.close()
    changed = [chosen[0], *mutants(_body("return a < b", "return 2"))[1:]]
    run._forget_stale(tmp_path, changed, "sim")
    kept = [r["student"] for r in ResultStore(tmp_path / run.STORE).rows()]
    assert kept == [chosen[0].id]  # the others changed, or were graded on a GPU


def _cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "autograder.cli", "mutants", *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)


def test_mutants_of_occupancy_are_all_killed_and_a_rerun_grades_nothing_again(tmp_path):
    out = tmp_path / "kept"
    res = _cli("occupancy", "--device", TEST_DEVICE, "--workers", "2", "--json", "--out",
               str(out))
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    made = mutants(exercises.solution_path("occupancy").read_text(encoding="utf-8"))
    assert [m["id"] for m in got["mutants"]] == [m.id for m in made]
    assert got["counts"]["killed"] == len(made), [
        (m["id"], m["verdict"]) for m in got["mutants"] if m["verdict"] != "killed"]
    assert sorted(p.name for p in out.glob("*.py")) == sorted(f"{m.id}.py" for m in made)

    def graded():
        with sqlite3.connect(out / run.STORE) as con:
            return sorted(con.execute("SELECT key, graded_at FROM results"))

    before = graded()
    again = _cli("occupancy", "--device", TEST_DEVICE, "--json", "--out", str(out))
    assert again.returncode == 0 and json.loads(again.stdout)["counts"] == got["counts"]
    assert graded() == before


def test_mutants_of_a_kernel_exercise_restricted_to_two_operators():
    res = _cli("block_sum", "--device", TEST_DEVICE, "--workers", "2", "-o", "sync",
               "-o", "augadd")
    assert res.returncode == 0, res.stderr
    assert "3 mutants of block_sum: 3 killed" in res.stdout
    for mutant_id in ("L24-sync-syncthreads-1", "L28-augadd-assign-1", "L29-sync-syncthreads-1"):
        assert mutant_id in res.stdout


def test_list_makes_the_mutants_without_grading(tmp_path):
    res = _cli("tiled_matmul", "--list", "--json", "-o", "index", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    listed = json.loads(res.stdout)["mutants"]
    assert listed and all(m["operator"] == "index" for m in listed)
    assert sorted(p.stem for p in tmp_path.iterdir()) == sorted(m["id"] for m in listed)
    bad = _cli("occupancy", "--list", "-o", "nope")
    assert bad.returncode == 2 and "unknown mutation operator" in bad.stderr


def test_an_unlisted_survivor_fails_the_command_and_a_listed_one_passes(tmp_path, monkeypatch):
    # the solution with a function no test calls: its `//` -> `/` mutant survives every test
    solution = tmp_path / "occupancy.py"
    solution.write_text(exercises.solution_path("occupancy").read_text(encoding="utf-8")
                        + "\n\ndef unused(a):\n    return a // 2\n", encoding="utf-8")
    monkeypatch.setattr(exercises, "solution_path", lambda name: solution)
    survivor = next(m.id for m in mutants(solution.read_text())
                    if m.operator == "floordiv" and m.line > 40)
    out, listed = tmp_path / "kept", tmp_path / "equivalent.toml"
    common = ["mutants", "occupancy", "--device", TEST_DEVICE, "--workers", "2", "-o",
              "floordiv", "--out", str(out), "--json"]
    strict = [] if TEST_DEVICE == "gpu" else ["--strict"]  # the simulator skips GPU cases
    res = CliRunner().invoke(app, common + strict + ["--equivalent", str(listed)])
    assert res.exit_code == 1, res.output
    got = json.loads(res.stdout)
    assert got["unlisted_survivors"] == [survivor]
    assert got["counts"]["killed"] == 3
    if strict:
        lenient = CliRunner().invoke(app, common + ["--equivalent", str(listed)])
        assert lenient.exit_code == 0, lenient.output
        assert json.loads(lenient.stdout)["counts"]["not judged"] == 1
    listed.write_text(f'{survivor} = "unused is never called"\n'
                      'L11-floordiv-div-1 = "listed by mistake"\n')
    res = CliRunner().invoke(app, common + strict + ["--equivalent", str(listed)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["counts"]["equivalent"] == 1 and not got["unlisted_survivors"]
    assert got["warnings"] == [got["warnings"][0]] and "L11-floordiv-div-1" in \
        got["warnings"][0] and "killed" in got["warnings"][0]
