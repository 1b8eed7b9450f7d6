"""Campaign state in SQLite (``DIR/campaign.sqlite``, WAL mode).

Tables:
  programs(seq, program_id, seed, generator, features, source, done)
  runs(program_id, interpreter, backend, verdict, aspect, error_type,
       torch_frame, graph_count, graph_breaks, elapsed_s, outcome)   outcome: JSON
  buckets(key, id, kind, stage, detail, interpreters, backend, count,
          program_id, case, new, lines_before, lines_after, checks, minimise_s)
  meta(key, value)                                                 value: JSON
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from harness.outcome import Outcome
from harness.program import Program
from fuzz.signature import Finding, Signature

SCHEMA = """
CREATE TABLE IF NOT EXISTS programs (
  seq INTEGER PRIMARY KEY, program_id TEXT NOT NULL, seed INTEGER, generator TEXT,
  features TEXT, source TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS runs (
  program_id TEXT NOT NULL, interpreter TEXT NOT NULL, backend TEXT NOT NULL,
  verdict TEXT NOT NULL, aspect TEXT, error_type TEXT, torch_frame TEXT,
  graph_count INTEGER, graph_breaks INTEGER, elapsed_s REAL, outcome TEXT NOT NULL,
  PRIMARY KEY (program_id, interpreter, backend));
CREATE TABLE IF NOT EXISTS buckets (
  key TEXT PRIMARY KEY, id TEXT NOT NULL, kind TEXT NOT NULL, stage TEXT NOT NULL,
  detail TEXT NOT NULL, interpreters TEXT NOT NULL, backend TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 0, program_id TEXT NOT NULL, case_path TEXT,
  new INTEGER NOT NULL DEFAULT 0, lines_before INTEGER, lines_after INTEGER,
  checks INTEGER, minimise_s REAL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class CampaignDB:
    """A campaign's SQLite database; every write commits at once."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)

    def set_meta(self, key: str, value: Any) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.conn.execute("SELECT key, value FROM meta")}

    def add_program(self, seq: int, program: Program) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO programs VALUES (?, ?, ?, ?, ?, ?, 0)",
            (seq, program.program_id, program.seed, program.generator, json.dumps(list(program.features)), program.source),
        )

    def finish_program(self, seq: int, outcomes: list[Outcome]) -> None:
        with self.conn:
            self.conn.execute("BEGIN")
            for o in outcomes:
                self.conn.execute(
                    "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (o.program_id, o.interpreter, o.backend, o.verdict.value, o.aspect, o.error_type, o.torch_frame,
                     o.graph_count, len(o.graph_breaks), o.elapsed_s, json.dumps(o.to_json())),
                )
            self.conn.execute("UPDATE programs SET done = 1 WHERE seq = ?", (seq,))

    def count_finding(self, finding: Finding, program_id: str, *, new: bool) -> bool:
        """Count a finding in its bucket; True if the bucket did not exist yet."""
        sig = finding.signature
        cur = self.conn.execute("UPDATE buckets SET count = count + 1 WHERE key = ?", (sig.key,))
        if cur.rowcount:
            return False
        self.conn.execute(
            "INSERT INTO buckets (key, id, kind, stage, detail, interpreters, backend, count, program_id, new) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (sig.key, sig.id, sig.kind, sig.stage, sig.detail, ",".join(sig.interpreters), finding.backend,
             program_id, int(new)),
        )
        return True

    def record_case(self, key: str, case: str | None, **stats: Any) -> None:
        self.conn.execute(
            "UPDATE buckets SET case_path = ?, lines_before = ?, lines_after = ?, checks = ?, minimise_s = ? WHERE key = ?",
            (case, stats.get("lines_before"), stats.get("lines_after"), stats.get("checks"), stats.get("elapsed_s"), key),
        )

    def rename_bucket(self, key: str, new_key: str) -> None:
        """Give a bucket the signature it has after minimisation (a divergence's
        language features); counts add up if a bucket of that key exists."""
        sig = Signature.parse(new_key)
        with self.conn:
            self.conn.execute("BEGIN")
            row = self.conn.execute("SELECT count FROM buckets WHERE key = ?", (new_key,)).fetchone()
            if row:
                self.conn.execute("UPDATE buckets SET count = count + (SELECT count FROM buckets WHERE key = ?) "
                                  "WHERE key = ?", (key, new_key))
                self.conn.execute("DELETE FROM buckets WHERE key = ?", (key,))
            else:
                self.conn.execute("UPDATE buckets SET key = ?, id = ?, detail = ? WHERE key = ?",
                                  (new_key, sig.id, sig.detail, key))

    def buckets(self) -> list[dict[str, Any]]:
        cols = [d[1] for d in self.conn.execute("PRAGMA table_info(buckets)")]
        return [dict(zip(cols, row)) for row in self.conn.execute("SELECT * FROM buckets ORDER BY kind, key")]

    def runs(self) -> list[dict[str, Any]]:
        cols = ["program_id", "interpreter", "backend", "verdict", "aspect", "error_type", "elapsed_s"]
        return [dict(zip(cols, row)) for row in self.conn.execute(f"SELECT {', '.join(cols)} FROM runs")]

    def outcomes(self) -> list[Outcome]:
        return [Outcome.from_json(json.loads(r[0])) for r in self.conn.execute("SELECT outcome FROM runs")]

    def programs_done(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM programs WHERE done = 1").fetchone()[0]

    def close(self) -> None:
        self.conn.close()
