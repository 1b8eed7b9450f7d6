"""Campaign state in SQLite (``DIR/campaign.sqlite``, WAL mode).

Tables:
  programs(seq, program_id, seed, generator, features, source, done, cells)
           done = 1 once every run of the program is recorded (one
           transaction), so a resumed campaign reruns exactly the others;
           cells: JSON list of the "interpreter/backend" cells it was
           scheduled on (fuzz.campaign.schedule; NULL in older databases);
           a run on another cell confirmed or placed a finding
  runs(program_id, interpreter, backend, threads, verdict, aspect, error_type,
       torch_frame, graph_count, graph_breaks, elapsed_s, outcome)   outcome: JSON
       threads: 0, or K for the free-threaded concurrency run (harness.threads)
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
from fuzz.triage.signature import Finding, Signature

SCHEMA = """
CREATE TABLE IF NOT EXISTS programs (
  seq INTEGER PRIMARY KEY, program_id TEXT NOT NULL, seed INTEGER, generator TEXT,
  features TEXT, source TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS runs (
  program_id TEXT NOT NULL, interpreter TEXT NOT NULL, backend TEXT NOT NULL,
  threads INTEGER NOT NULL DEFAULT 0,
  verdict TEXT NOT NULL, aspect TEXT, error_type TEXT, torch_frame TEXT,
  graph_count INTEGER, graph_breaks INTEGER, elapsed_s REAL, outcome TEXT NOT NULL,
  PRIMARY KEY (program_id, interpreter, backend, threads));
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
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(programs)")}
        if "cells" not in columns:  # a database from before the cell scheduler
            self.conn.execute("ALTER TABLE programs ADD COLUMN cells TEXT")

    def set_meta(self, key: str, value: Any) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.conn.execute("SELECT key, value FROM meta")}

    def add_program(self, seq: int, program: Program, cells: list[str] | None = None) -> None:
        """Record a program before it runs; ``cells``: the "interpreter/backend"
        keys it is scheduled on (None: not recorded)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO programs (seq, program_id, seed, generator, features, source, done, cells) "
            "VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
            (seq, program.program_id, program.seed, program.generator, json.dumps(list(program.features)),
             program.source, json.dumps(cells) if cells is not None else None),
        )

    def finish_program(self, seq: int, outcomes: list[Outcome]) -> None:
        with self.conn:
            self.conn.execute("BEGIN")
            for o in outcomes:
                self.conn.execute(
                    "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (o.program_id, o.interpreter, o.backend, o.threads, o.verdict.value,
                     o.aspect.value if o.aspect else "", o.error_type, o.torch_frame, o.graph_count,
                     len(o.graph_breaks), o.elapsed_s, json.dumps(o.to_json())),
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

    def rename_bucket(self, key: str, new_key: str, *, known: bool = False) -> None:
        """Give a bucket the signature it has after minimisation (a divergence's
        language features); counts add up if a bucket of that key exists.
        ``known``: the new key is a corpus case's, so the bucket is not new."""
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
            if known:
                self.conn.execute("UPDATE buckets SET new = 0 WHERE key = ?", (new_key,))

    def buckets(self) -> list[dict[str, Any]]:
        cols = [d[1] for d in self.conn.execute("PRAGMA table_info(buckets)")]
        return [dict(zip(cols, row)) for row in self.conn.execute("SELECT * FROM buckets ORDER BY kind, key")]

    def runs(self) -> list[dict[str, Any]]:
        cols = ["program_id", "interpreter", "backend", "threads", "verdict", "aspect", "error_type", "elapsed_s"]
        return [dict(zip(cols, row)) for row in self.conn.execute(f"SELECT {', '.join(cols)} FROM runs")]

    def outcomes(self) -> list[Outcome]:
        return [Outcome.from_json(json.loads(r[0])) for r in self.conn.execute("SELECT outcome FROM runs")]

    def programs_done(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM programs WHERE done = 1").fetchone()[0]

    def next_seq(self) -> int:
        """The seq of the next program a campaign adds (0 for an empty one)."""
        return self.conn.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM programs").fetchone()[0]

    def programs(self) -> list[dict[str, Any]]:
        """Every program row in seq order (``features`` decoded)."""
        cols = ["seq", "program_id", "seed", "generator", "features", "source", "done", "cells"]
        rows = [dict(zip(cols, r)) for r in self.conn.execute(f"SELECT {', '.join(cols)} FROM programs ORDER BY seq")]
        for row in rows:
            row["features"] = json.loads(row["features"] or "[]")
            row["cells"] = json.loads(row["cells"]) if row["cells"] else None
        return rows

    def program(self, program_id: str) -> Program | None:
        """The stored program with this id (the first by seq), or None."""
        row = next((r for r in self.programs() if r["program_id"] == program_id), None)
        return _program(row) if row else None

    def unfinished_programs(self) -> list[tuple[int, Program]]:
        """(seq, program) of programs added but not finished, in seq order:
        the ones in flight when a campaign was killed."""
        return [(r["seq"], _program(r)) for r in self.programs() if not r["done"]]

    def scheduled_cells(self) -> dict[int, list[str]]:
        """seq -> the "interpreter/backend" cells each program was scheduled
        on, for the programs that recorded them."""
        return {r["seq"]: r["cells"] for r in self.programs() if r["cells"] is not None}

    def unfiled_new_buckets(self) -> list[tuple[Finding, Program]]:
        """New buckets without a corpus case, each with its first program."""
        out = []
        for b in self.buckets():
            if b["new"] and not b["case_path"]:
                program = self.program(b["program_id"])
                if program is not None:
                    out.append((Finding(Signature.parse(b["key"]), b["backend"]), program))
        return out

    def close(self) -> None:
        self.conn.close()


def _program(row: dict[str, Any]) -> Program:
    return Program(source=row["source"], seed=row["seed"], generator=row["generator"] or "",
                   features=tuple(row["features"]))
