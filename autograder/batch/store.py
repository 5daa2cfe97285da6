"""The class's results in SQLite: one row per submission, each committed in its own
transaction, so a batch killed at any moment resumes where it stopped; and what the last run
found in the class folder but did not grade (table ``skipped``), with the reasons.

The batch's secret seed is stored on first use, and so is its rule: by default each exercise's
seed derives from it and the exercise's name, so every student of the class faces the same
hidden inputs (issue 22: same code, same grade); with ``--seed-per-student``, from the
submission's key. A resumed run grades exactly as an uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
from pathlib import Path

from autograder.host import class_seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    student TEXT NOT NULL,
    exercise TEXT NOT NULL,
    submission TEXT,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    provisional INTEGER NOT NULL,
    device TEXT NOT NULL,
    result_json TEXT NOT NULL,
    graded_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS skipped (
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    reason TEXT NOT NULL,
    student TEXT,
    exercise TEXT,
    key TEXT,
    found_at TEXT NOT NULL DEFAULT (datetime('now'))
);
"""

#: The columns of a not-graded entry (:class:`autograder.batch.discovery.Skipped`).
SKIPPED_COLUMNS = ("path", "kind", "reason", "student", "exercise", "key")


class ResultStore:
    """Results of one batch, keyed by submission key (``student/assignment``)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def batch_seed(self, requested: int | None = None) -> int:
        """The batch's secret seed: stored on first use, the same on every resume."""
        row = self.db.execute("SELECT value FROM meta WHERE key='seed'").fetchone()
        if row:
            return int(row[0])
        seed = secrets.randbits(63) if requested is None else int(requested)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('seed', ?)", (str(seed),))
        return int(self.db.execute("SELECT value FROM meta WHERE key='seed'").fetchone()[0])

    def seed_per_student(self, requested: bool | None = None) -> bool:
        """The batch's seed rule, stored on first use: True for one seed per submission, False
        (the default) for one per exercise. Raises ``ValueError`` when ``requested`` differs from
        the stored rule (a resumed batch keeps the rule it started with)."""
        row = self.db.execute("SELECT value FROM meta WHERE key='seed_rule'").fetchone()
        if row is None:
            rule = "student" if requested else "exercise"
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('seed_rule', ?)", (rule,))
            row = self.db.execute("SELECT value FROM meta WHERE key='seed_rule'").fetchone()
        per_student = row[0] == "student"
        if requested is not None and bool(requested) != per_student:
            raise ValueError(f"{self.path}: this batch was started with one secret seed per "
                             f"{row[0]}; resume it without changing --seed-per-student, or "
                             "grade into a new --db")
        return per_student

    @staticmethod
    def submission_seed(batch_seed: int, key: str) -> int:
        """The seed of the submission ``key`` (``student/exercise``) under the per-student
        rule."""
        digest = hashlib.sha256(f"{batch_seed}:{key}".encode()).digest()
        return int.from_bytes(digest[:8], "little") >> 1

    @staticmethod
    def exercise_seed(batch_seed: int, exercise: str) -> int:
        """The seed every submission of ``exercise`` gets under the default rule: the class
        faces the same hidden inputs (:func:`autograder.host.class_seed.exercise_seed`: the
        rule nbgrader's autograde and the Gradescope runner grade by too)."""
        return class_seed.exercise_seed(batch_seed, exercise)

    def done_keys(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM results")}

    def save(self, key: str, student: str, result: dict) -> bool:
        """Insert one result (``ExerciseResult.to_dict()``) in its own transaction; returns
        whether it was written. Idempotent: a key already present is left as it is (the first
        result stored wins), so a result that arrives twice — a task Dask ran again after its
        worker died, a batch resumed beside another — is stored once."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO results (key, student, exercise, submission, score, max_score,"
            " provisional, device, result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, student, result["exercise"], result["submission"], result["score"],
             result["max_score"], int(result["provisional"]), result["device"],
             json.dumps(result)),
        )
        return cur.rowcount == 1

    def rows(self) -> list[dict]:
        """All results, sorted by key, each with its parsed ``result`` dict."""
        cur = self.db.execute("SELECT key, student, exercise, submission, score, max_score, "
                              "provisional, device, result_json FROM results ORDER BY key")
        cols = [d[0] for d in cur.description]
        out = []
        for row in cur:
            d = dict(zip(cols, row))
            d["result"] = json.loads(d.pop("result_json"))
            out.append(d)
        return out

    def replace_skipped(self, items: list[dict]) -> None:
        """Replace the list of what was not graded with ``items`` (dicts with the keys of
        :data:`SKIPPED_COLUMNS`; ``student``, ``exercise`` and ``key`` may be missing or None),
        in one transaction: the store always shows the class folder as the last run found it."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("DELETE FROM skipped")
            self.db.executemany(
                "INSERT INTO skipped (path, kind, reason, student, exercise, key) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [tuple(item.get(c) for c in SKIPPED_COLUMNS) for item in items])

    def skipped(self) -> list[dict]:
        """What the last run did not grade, sorted by path: dicts with the keys of
        :data:`SKIPPED_COLUMNS`."""
        cur = self.db.execute(f"SELECT {', '.join(SKIPPED_COLUMNS)} FROM skipped "
                              "ORDER BY path, rowid")
        return [dict(zip(SKIPPED_COLUMNS, row)) for row in cur]
