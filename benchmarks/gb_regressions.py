"""Graph-break-regression buckets of one campaign under the old rule and the
first-difference rule, recomputed from its runs.

    tcfuzz run --python 3.12,3.13 --backend eager --budget 15m --no-minimize --out reports/gb15
    python benchmarks/gb_regressions.py reports/gb15          # or .../campaign.sqlite

The old rule (fuzz/triage/signature.py before commit bb6217a, ``findings``):
every gb_type that Dynamo reported on some interpreters and not on others that
traced the program (verdict match or divergence) on the lowest backend showing
it is a bucket of its own, "<gb_type> [absent on ...]". The rule of today
(``signature.findings``, ``signature.first_difference``): only the first
difference between the interpreters' sequences of breaks (user line,
gb_type) is a bucket; the breaks after it are its consequences, listed with
it. Prints both counts, each bucket of today with the programs in it and the
consequences folded into it, and the old buckets that today's rule folds.
Exit code 0.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.backends import ladder_rank  # noqa: E402
from harness.outcome import Outcome  # noqa: E402
from fuzz.campaign.database import CampaignDB  # noqa: E402
from fuzz.triage.signature import (  # noqa: E402
    ABSENT_ON, GRAPH_BREAK, GRAPH_BREAK_REGRESSION, Signature, causes, findings, interpreter_order)
from fuzz.triage.signature import _TRACED  # noqa: E402  (both rules' "traced the program": match, divergence)


def old_regressions(outcomes: list[Outcome]) -> list[Signature]:
    """One program's graph-break regressions under the old rule: per gb_type
    on the lowest backend that showed it, a bucket where some interpreter
    that traced the program there did not report it (the loop of
    ``findings`` at commit bb6217a^, graph breaks only)."""
    where: dict[str, dict[str, set[str]]] = {}
    traced: dict[str, set[str]] = {}
    for outcome in outcomes:
        if outcome.verdict in _TRACED:
            traced.setdefault(outcome.backend, set()).add(outcome.interpreter)
        for kind, detail in causes(outcome):
            if kind is GRAPH_BREAK:
                where.setdefault(detail, {}).setdefault(outcome.backend, set()).add(outcome.interpreter)
    found = []
    for detail, by_backend in sorted(where.items()):
        lowest = min(by_backend, key=lambda b: (ladder_rank(b), b))
        absent = sorted(traced.get(lowest, set()) - by_backend[lowest], key=interpreter_order)
        if absent:
            interps = tuple(sorted(by_backend[lowest], key=interpreter_order))
            found.append(Signature(GRAPH_BREAK_REGRESSION, "dynamo", f"{detail}{ABSENT_ON}{', '.join(absent)}]",
                                   interps))
    return found


def by_program(outcomes: list[Outcome]) -> dict[str, list[Outcome]]:
    grouped: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        grouped[outcome.program_id].append(outcome)
    return grouped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="a campaign's campaign.sqlite, or the folder that holds it")
    args = parser.parse_args()
    path = args.db / "campaign.sqlite" if args.db.is_dir() else args.db
    if not path.is_file():
        print(f"no campaign database at {path}: pass a campaign folder or its campaign.sqlite", file=sys.stderr)
        return 2
    db = CampaignDB(path)
    outcomes = db.outcomes()
    programs = by_program(outcomes)
    old: dict[str, set[str]] = defaultdict(set)  # bucket key -> program ids
    new: dict[str, set[str]] = defaultdict(set)
    folded: dict[str, set[str]] = defaultdict(set)  # bucket key -> consequences (with their program)
    for program_id, runs in sorted(programs.items()):
        for sig in old_regressions(runs):
            old[sig.key].add(program_id)
        for finding in findings(runs):
            if finding.signature.kind is GRAPH_BREAK_REGRESSION:
                new[finding.signature.key].add(program_id)
                folded[finding.signature.key].update(f"{c}  [{program_id}]" for c in finding.consequences)
    print(f"{len(programs)} programs, {len(outcomes)} runs ({path})")
    print(f"old rule (one bucket per gb_type present on some interpreters, absent on others): {len(old)} buckets")
    print(f"first-difference rule: {len(new)} buckets")
    for key in sorted(new):
        sig = Signature.parse(key)
        print(f"  {sig.detail} (on {', '.join(sig.interpreters)}): {len(new[key])} programs")
        for consequence in sorted(folded[key]):
            print(f"      folded: {consequence}")
    gone = sorted(set(old) - set(new))
    if gone:
        print(f"old buckets the first-difference rule folds ({len(gone)}):")
        for key in gone:
            sig = Signature.parse(key)
            print(f"  {sig.detail} (on {', '.join(sig.interpreters)}): {len(old[key])} programs")
    db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
