"""The order in which a campaign files what it found, and what each case is
minimised from.

Filing time goes to bugs first (tcfuzz issue 29): divergences, crashes,
compile errors and timeouts, then the further programs of divergence
signatures, then graph-break regressions and graph breaks that show on some
interpreters only, then the other graph breaks, and last a regression whose
program raised in eager on every interpreter (a program error, seldom a
bug). Within one priority a bucket an earlier campaign left in the corpus
backlog (fuzz.corpus.backlog) goes first. After the campaign's own new
buckets come the waiting buckets it did not see (when it files them at all).

A further program of a divergence signature is a wrong result whose
signature, before minimisation, is a known one's (or a second program of a
new one): only its minimised program's root cause tells whether it is a bug
the corpus has. The signature before minimisation is coarse (kind, stage,
aspect, interpreters): every case that gives a wrong value on all six
interpreters has the same one, so a new silent wrong result looks known
until it is minimised. Such a program goes before the graph breaks: the
campaigns of 2026-12-07 met a new one (a module global stored through
``globals()[name]`` read stale by the compiled code, every interpreter)
as a further program, filed after every graph break, that is never.

A bucket the backlog holds reduced (an earlier minimisation that ran out of
time) is minimised on from that reduced program, not from the new one. A
case is filed only at most CASE_MAX_LINES program lines unless its
minimisation completed, so a campaign files what an engineer can read: the
default campaign of 2026-12-05 filed a 92-line graph-break regression after
111 s of minimisation. A bucket left reduced by SHELVED_CAMPAIGNS_MAX
campaigns is filed at whatever size its minimisation reaches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from harness.outcome import Outcome
from harness.program import Program
from fuzz.corpus.backlog import BacklogEntry
from fuzz.triage.signature import Finding, Kind

# Most program lines (fuzz.corpus.sizes) of a case a campaign files from a
# minimisation that ran out of time: issue 32's limit for a bug case.
CASE_MAX_LINES = 15
# Campaigns that may leave a bucket reduced in the backlog before one files
# it whatever its size.
SHELVED_CAMPAIGNS_MAX = 3
# filing_priority of the findings filed last (a regression whose program
# raised in eager on every interpreter)
LOW_PRIORITY = 3


@dataclasses.dataclass(frozen=True)
class QueuedCase:
    """One finding to minimise and file, with the program to start from.

    ``new_bucket``: one of this campaign's new buckets (else a further program
    of a divergence signature, or a waiting bucket it did not see);
    ``from_backlog``: a bucket the corpus backlog held; ``max_lines``: the
    size limit file_finding applies when the minimisation runs out of time
    (None: none)."""

    finding: Finding
    program: Program
    new_bucket: bool
    from_backlog: bool = False
    max_lines: int | None = CASE_MAX_LINES


def filing_priority(finding: Finding, interpreter_count: int) -> int:
    """Order in which new buckets are filed when time is short: bugs (0),
    then graph-break regressions and graph breaks that show on some of the
    ``interpreter_count`` interpreters only (1), then the rest (2)."""
    sig = finding.signature
    if sig.kind == Kind.GRAPH_BREAK_REGRESSION:
        return 1
    if sig.kind != Kind.GRAPH_BREAK:
        return 0
    return 1 if len(sig.interpreters) < interpreter_count else 2


def eager_raises_everywhere(outcomes: Sequence[Outcome]) -> bool:
    """Whether the program's first eager call raised on every interpreter that ran it."""
    eager = [o for o in outcomes if o.eager and not o.threads]
    return bool(eager) and all(o.eager[0].exc_type for o in eager)


def filing_queue(new: Iterable[tuple[Finding, Program]], *, waiting: dict[str, BacklogEntry],
                 unseen: Iterable[tuple[Finding, BacklogEntry]] = (),
                 further: Iterable[tuple[Finding, Program]] = (), interpreter_count: int,
                 low_priority: Iterable[str] = ()) -> list[QueuedCase]:
    """The filing order (module docstring) of the campaign's ``new`` buckets,
    the backlog's ``unseen`` ones (backlog.unseen) and the ``further``
    programs of divergence signatures (after the new bugs, before the graph
    breaks); ``waiting``: the backlog by signature key; ``low_priority``: the
    signature keys filed last among the new."""
    by_id = {e.finding.signature.id: e for e in waiting.values()}
    low = set(low_priority)

    def queued(finding: Finding, program: Program, entry: BacklogEntry | None, new_bucket: bool) -> QueuedCase:
        if entry is None:
            return QueuedCase(finding, program, new_bucket)
        shelved_out = entry.reduced and entry.campaigns >= SHELVED_CAMPAIGNS_MAX
        return QueuedCase(finding, entry.program if entry.reduced else program, new_bucket, from_backlog=True,
                          max_lines=None if shelved_out else CASE_MAX_LINES)

    def order(finding: Finding) -> tuple[int, bool]:
        priority = LOW_PRIORITY if finding.signature.key in low else filing_priority(finding, interpreter_count)
        return priority, finding.signature.id not in by_id

    own = [queued(f, p, by_id.get(f.signature.id), True) for f, p in sorted(new, key=lambda fp: order(fp[0]))]
    bugs = [q for q in own if order(q.finding)[0] == 0]
    old = [queued(f, e.program, e, False) for f, e in unseen]
    return bugs + [QueuedCase(f, p, False) for f, p in further] + own[len(bugs):] + old
