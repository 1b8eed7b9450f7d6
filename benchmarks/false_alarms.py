"""Measure the oracle's false-alarm rate from a campaign run with backends
that cannot be wrong about the program's semantics.

    tcfuzz run --python 3.11,3.12,3.13,3.13t --backend tcfuzz_identity,tcfuzz_force_eager \\
        --programs 2000 --seed 7000 --no-minimize --out reports/false-alarms
    python benchmarks/false_alarms.py reports/false-alarms [more campaign folders] [--corpus corpus]

Under ``tcfuzz_force_eager`` (``torch.compiler.set_stance("force_eager")``) the
compiled function runs its original bytecode, so every non-match verdict is a
false alarm of the oracle. Under ``tcfuzz_identity`` Dynamo traces the program
and runs the FX graph it captured unchanged, so a non-match is either a real
Dynamo bug or a false alarm: it is counted as explained when a corpus case has
the same cause (kind and detail) on a superset of its interpreters, and as
as a documented limitation when its detail or error message holds one of
the messages ``corpus/known-issues.toml`` lists as torch raising by design
(``[limitations] messages``, fuzz.triage.known: the same rule a campaign's
buckets follow), and as unexplained (a false alarm until someone shows
otherwise) otherwise. Prints a
table per interpreter x backend and the false-alarm rate, then the bug
verdicts by the call of the plan they were found at (harness.plan: fresh,
cached, guard, shape, carried; "" for module globals after the run), how
many runs made the carried call, and how many left it uncompared because
eager disagreed with itself there. Several campaign folders (shorter
campaigns of consecutive seeds) are counted as one.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz.corpus import store  # noqa: E402
from fuzz.triage import known as known_issues  # noqa: E402
from fuzz.campaign.database import CampaignDB  # noqa: E402
from fuzz.triage.signature import Signature, causes, interpreter_order  # noqa: E402
from harness.plan import Call  # noqa: E402  (the standard library only: importable on the host)

SEMANTICS_PRESERVING = ("tcfuzz_force_eager",)
CARRIED = Call.CARRIED.value  # the call that carries the previous call's arguments on


def known_causes(corpus_dir: Path) -> list[Signature]:
    found = []
    for path in store.list_cases(corpus_dir):
        try:
            found.append(Signature.parse(store.read_case(path)[1]["signature"]))
        except Exception as e:
            print(f"skipping {path}: {e}", file=sys.stderr)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("campaign", type=Path, nargs="+", help="campaign folders (each holds campaign.sqlite)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "corpus")
    args = parser.parse_args()
    dbs = [CampaignDB(folder / "campaign.sqlite") for folder in args.campaign]
    outcomes = [o for db in dbs for o in db.outcomes()]
    known = known_causes(args.corpus)
    by_design = known_issues.load(args.corpus).limitation_messages
    by_call: Counter = Counter()
    runs: Counter = Counter()
    alarms: Counter = Counter()
    explained: Counter = Counter()
    limited: Counter = Counter()
    unexplained: list[str] = []
    for o in outcomes:
        cell = (o.interpreter, o.backend)
        runs[cell] += 1
        if not o.verdict.is_bug:
            continue
        alarms[cell] += 1
        by_call[o.call] += 1
        bug = next(c for c in causes(o) if c[0] != "graph-break")
        if o.backend not in SEMANTICS_PRESERVING and any(
                s.cause == bug and o.interpreter in s.interpreters for s in known):
            explained[cell] += 1
        elif o.backend not in SEMANTICS_PRESERVING and any(
                m in f"{bug[1]}\n{o.error_message}" for m in by_design):
            limited[cell] += 1
        else:
            unexplained.append((bug[:2], o.program_id, o.interpreter, o.backend))
    programs = sum(db.programs_done() for db in dbs)
    print(f"{programs} programs, {len(outcomes)} runs ({', '.join(str(c) for c in args.campaign)})\n")
    print(f"{'python':7} {'backend':20} {'runs':>6} {'bug verdicts':>13} {'known bugs':>11} {'limitations':>12} "
          f"{'false alarms':>13}")
    for cell in sorted(runs, key=lambda c: (interpreter_order(c[0]), c[1])):
        print(f"{cell[0]:7} {cell[1]:20} {runs[cell]:6} {alarms[cell]:13} {explained[cell]:11} {limited[cell]:12} "
              f"{alarms[cell] - explained[cell] - limited[cell]:13}")
    total = sum(runs.values())
    carried = sum(1 for o in outcomes if any(c.label == CARRIED for c in o.eager))
    uncompared = sum(1 for o in outcomes if any(n.endswith(f"@{CARRIED}: eager differs from itself")
                                                for n in o.incomparable))
    print("\nbug verdicts by call: " + (", ".join(f"{call or 'globals'} {n}" for call, n in by_call.most_common())
                                       or "none"))
    print(f"runs with the carried call: {carried} of {total}; carried call left uncompared (eager "
          f"disagreed with itself there): {uncompared}")
    print(f"\nunexplained: {len(unexplained)} of {total} runs ({len(unexplained) / max(total, 1):.4%}), "
          f"false alarms until a corpus case shows each to be a torch bug")
    # one line per cause: how many programs, where, and a few to look at
    by_cause: dict[tuple, list] = {}
    for cause, program_id, interpreter, backend in unexplained:
        by_cause.setdefault(cause, []).append((program_id, interpreter, backend))
    for cause, hits in sorted(by_cause.items(), key=lambda kv: -len({h[0] for h in kv[1]})):
        programs_hit = sorted({h[0] for h in hits})
        where = ",".join(sorted({h[1] for h in hits}, key=interpreter_order))
        print(f"  {len(programs_hit):4} programs  {where:20} {' '.join(sorted({h[2] for h in hits}))}: "
              f"{cause[0]} {cause[1]}  e.g. {' '.join(programs_hit[:3])}")
    return 0 if not unexplained else 1


if __name__ == "__main__":
    sys.exit(main())
