"""The interestingness test of minimisation: ``SignatureCheck(source) ->
bool``, does a candidate still show exactly the case's signature, run on the
persistent workers (fuzz.campaign.workers)? Two-phase where it can be
(``fast``): candidates on one interpreter of the signature, with the call plan
stopped after the call that showed the finding, and the full check (every
interpreter, both ways, the whole plan) as ``confirm``; fuzz.reduce.pipeline
confirms the best source of every stage with it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.outcome import Outcome
from harness.program import Program
from harness.settings import CompileSettings
from fuzz.triage.signature import Kind, Signature, causes, findings
from fuzz.campaign.workers import RUN_TIMEOUT_S, Task, WorkerPool


# A candidate may run this many times as long as the case did on its first
# check (at least CANDIDATE_TIMEOUT_MIN_S) before it counts as a hang: a
# deletion that leaves a loop without its exit would otherwise cost the
# worker's full run timeout (90 s) and a restart. Not for "timeout" cases.
CANDIDATE_TIMEOUT_FACTOR = 5.0
CANDIDATE_TIMEOUT_MIN_S = 20.0


class SignatureCheck:
    """Callable ``check(source) -> bool``: does the program still show exactly
    ``signature`` when run with ``backend`` on ``interpreters`` (all that the
    campaign covers, so the interpreter set is checked both ways)?

    ``fast``: two-phase checking, for any signature but a graph-break
    regression's (whose checks are all full). The first check (the input)
    runs on every interpreter; later candidates run on one interpreter of the
    signature (the first; in ``check_many`` the k-th candidate on the k-th of
    them, so ``spread`` candidates run at once on ``jobs`` = 1) and must show
    the same cause there with the same root-cause key and eager behaviour as
    the input did on that interpreter; then, for a signature absent on some
    of ``interpreters``, on each of those, where the cause must stay absent
    (a signature on five of six interpreters: two runs instead of six);
    ``confirm(source)`` runs the full check, and the
    minimiser (``_Oracle``) confirms its best source at the end of every stage,
    falling back to the last confirmed one, and to full checks from then on,
    when a confirmation fails. ``fast`` False: every check is full.
    A fast check of a divergence or compile error compiles only the calls
    of the plan (harness.plan) up to the one where the input showed it on
    every interpreter (``plan_calls`` -> ``Task.compiled_calls``; None: all;
    eager still makes every call, so its behaviour is compared in full), so
    a one-interpreter signature has fast checks too; ``fast`` is True once
    fast checks are in use.

    After the first check that holds, each run of a candidate gets
    ``timeout_s`` = CANDIDATE_TIMEOUT_FACTOR x the longest run of that check
    (at least CANDIDATE_TIMEOUT_MIN_S seconds, at most the worker's own
    limit); a "timeout" signature keeps the worker's limit.

    ``settings``: what every run compiles with; the minimiser's
    ``settings/drop`` pass assigns it (fuzz.reduce.settings_passes)."""

    def __init__(self, pool: WorkerPool, program: Program, signature: Signature, backend: str,
                 interpreters: list[str], *, fullgraph: bool = False, device: str = "cpu",
                 settings: CompileSettings | None = None, fast: bool = False):
        self.pool, self.program, self.signature, self.backend = pool, program, signature, backend
        self.fullgraph, self.device = fullgraph, device
        self.settings = settings or CompileSettings()  # how the finding compiled (harness.settings)
        inside = [i for i in interpreters if i in signature.interpreters]
        outside = [i for i in interpreters if i not in signature.interpreters]
        self.first, self.rest, self.inside, self.outside = inside[:1], inside[1:] + outside, inside, outside
        # a graph-break regression is its absence elsewhere, which a short plan cannot show: full checks.
        # A finding absent on some interpreters is fast-checked on one of its own and on every one
        # it is absent from (one interpreter alone drifted: a planted bug of 3.11-3.13 reduced to 9
        # lines that showed on 3.13t too, rejected at confirmation, back to 63 lines)
        self._fast = fast and signature.kind is not Kind.GRAPH_BREAK_REGRESSION
        # calls of the plan a fast check makes (the input's, up to the one that showed the finding); None: all
        self.plan_calls: int | None = None
        self._plan_learned = False
        self.calls = 0
        self.timeout_s: float | None = None
        self.root_key: tuple | None = None
        self.behaviour: dict[str, str] = {}
        # root key and eager behaviour of the input per interpreter of the signature: what a fast check compares
        self.key_on: dict[str, tuple] = {}
        self.behaviour_on: dict[str, dict[str, str]] = {}
        self.shown: list[Outcome] = []  # the outcomes that set root_key: what filing keys the case by

    @property
    def fast(self) -> bool:
        """Fast checks are in use: the signature has several interpreters, or
        the input showed it before the last call of its plan."""
        return self._fast and (len(self.inside) > 1 or self.plan_calls is not None)

    @fast.setter
    def fast(self, value: bool) -> None:
        self._fast = value

    def _tasks(self, program: Program, names: list[str], *, short: bool = False) -> list[Task]:
        compiled_calls = self.plan_calls if short else None  # eager's calls all made: its behaviour is compared
        return [Task(program, n, self.backend, self.device, self.fullgraph, compiled_calls=compiled_calls,
                     timeout_s=self.timeout_s, settings=self.settings) for n in names]

    def _learn_plan(self, outcomes: list[Outcome]) -> None:
        """Set ``plan_calls`` from the input's outcomes: one more than the
        index of the latest call, over the signature's interpreters, where a
        divergence or compile error first showed; None when that is the last
        call made, for other kinds, or when an outcome names no call."""
        if self._plan_learned:
            return
        self._plan_learned = True
        if self.signature.kind not in (Kind.DIVERGENCE, Kind.COMPILE_ERROR):
            return
        needed = made = 0
        for o in self._mine(outcomes):
            if self.signature.cause not in causes(o):
                continue
            labels = [r.label for r in o.compiled]
            if o.call not in labels:
                return
            needed, made = max(needed, labels.index(o.call) + 1), max(made, len(labels))
        if 0 < needed < made:
            self.plan_calls = needed

    def _learn_timeout(self, outcomes: list[Outcome]) -> None:
        if self.timeout_s is None and self.signature.kind != "timeout" and outcomes:
            longest_s = max(o.elapsed_s for o in outcomes)
            self.timeout_s = min(RUN_TIMEOUT_S, max(CANDIDATE_TIMEOUT_MIN_S, CANDIDATE_TIMEOUT_FACTOR * longest_s))

    def _mine(self, outcomes: list[Outcome]) -> list[Outcome]:
        return [o for o in outcomes if o.interpreter in self.signature.interpreters and o.verdict.is_bug]

    def _keeps_root_cause(self, outcomes: list[Outcome]) -> bool:
        """Do ``outcomes`` show the case's root cause (fuzz.triage.rootcause):
        the same exception fingerprint, and eager's kind of behaviour per call
        (returned stays returned, an eager exception keeps its type)? The first
        outcomes that hold set both (and what a fast check compares)."""
        mine = self._mine(outcomes)
        # eager's behaviour on the signature's interpreters whatever the verdict: a graph break's
        # runs match, and without this a case drifted to a program whose eager raises (measured)
        shown_on = [o for o in outcomes if o.interpreter in self.signature.interpreters]
        key, behaviour = root_key(mine, self.signature), dict(eager_behaviour(shown_on))
        if self.root_key is None:
            self.root_key, self.behaviour, self.shown = key, behaviour, mine
            for name in self.inside:
                on = [o for o in mine if o.interpreter == name]
                self.key_on[name] = root_key(on, self.signature)
                self.behaviour_on[name] = dict(eager_behaviour([o for o in shown_on if o.interpreter == name]))
        return key == self.root_key and _same_behaviour(behaviour, self.behaviour)

    def _holds_on_one(self, outcome: Outcome) -> bool:
        """A fast check: ``outcome`` (of one interpreter of the signature) shows
        the cause with the input's root-cause key and eager behaviour there."""
        name = outcome.interpreter
        if self.signature.cause not in causes(outcome) or name not in self.key_on:
            return False
        return root_key(self._mine([outcome]), self.signature) == self.key_on[name] and \
            _same_behaviour(dict(eager_behaviour([outcome])), self.behaviour_on[name])

    def _absent(self, outcomes: list[Outcome]) -> bool:
        """A fast check's other half: none of ``outcomes`` (of interpreters
        outside the signature) shows its cause."""
        return not any(self.signature.cause in causes(o) for o in outcomes)

    def _fast_now(self) -> bool:
        return self.fast and self.root_key is not None  # the input is always checked in full

    @property
    def spread(self) -> int:
        """Interpreters a batch of fast checks spreads over (1 for full checks)."""
        return len(self.inside) if self._fast_now() else 1

    def __call__(self, source: str) -> bool:
        if self._fast_now():
            self.calls += 1
            program = self.program.with_source(source)
            return all(self._holds_on_one(o) for o in self.pool.run_all(self._tasks(program, self.first, short=True))) \
                and self._absent(self.pool.run_all(self._tasks(program, self.outside, short=True)))
        return self.confirm(source)

    def confirm(self, source: str) -> bool:
        """The full check of ``source``: every interpreter, both ways, and the root cause."""
        self.calls += 1
        program = self.program.with_source(source)
        first = self.pool.run_all(self._tasks(program, self.first))
        if not all(self.signature.cause in causes(o) for o in first):
            return False
        rest = self.pool.run_all(self._tasks(program, self.rest))
        holds = any(f.signature == self.signature.base() for f in findings(first + rest)) \
            and self._keeps_root_cause(first + rest)
        if holds:
            self._learn_timeout(first + rest)
            self._learn_plan(first + rest)
        return holds

    def check_many(self, sources: Sequence[str]) -> list[bool]:
        """``[self(s) for s in sources]``, but the runs of all candidates go to
        the pool at once, so ``jobs`` workers per interpreter check them in
        parallel."""
        self.calls += len(sources)
        programs = [self.program.with_source(s) for s in sources]
        if self._fast_now():  # candidate k on interpreter k of the signature, all at once
            outs = self.pool.run_all([self._tasks(p, [self.inside[k % len(self.inside)]], short=True)[0]
                                      for k, p in enumerate(programs)])
            holds = [self._holds_on_one(o) for o in outs]
            alive = [k for k, h in enumerate(holds) if h and self.outside]  # then where it must stay absent
            elsewhere = self.pool.run_all([t for k in alive for t in self._tasks(programs[k], self.outside, short=True)])
            m = len(self.outside)
            for r, k in enumerate(alive):
                holds[k] = self._absent(elsewhere[r * m:(r + 1) * m])
            return holds
        first = self.pool.run_all([t for p in programs for t in self._tasks(p, self.first)])
        n = len(self.first)
        firsts = [first[k * n:(k + 1) * n] for k in range(len(programs))]
        alive = [k for k, outs in enumerate(firsts) if all(self.signature.cause in causes(o) for o in outs)]
        rest = self.pool.run_all([t for k in alive for t in self._tasks(programs[k], self.rest)])
        m = len(self.rest)
        result = [False] * len(sources)
        for r, k in enumerate(alive):
            outs = firsts[k] + rest[r * m:(r + 1) * m]
            result[k] = any(f.signature == self.signature.base() for f in findings(outs)) \
                and self._keeps_root_cause(outs)
            if result[k]:
                self._learn_timeout(firsts[k] + rest[r * m:(r + 1) * m])
                self._learn_plan(firsts[k] + rest[r * m:(r + 1) * m])
        return result


def _same_behaviour(behaviour: dict[str, str], reference: dict[str, str]) -> bool:
    """Eager behaves the same in the calls that both plans make (a shape call
    goes when the inputs shrink to size 1)."""
    return all(behaviour[c] == reference[c] for c in behaviour.keys() & reference.keys())


def root_key(outcomes: list[Outcome], signature: Signature) -> tuple:
    """What of a divergence's root cause the outcomes carry: its exception
    fingerprint (types and message template, fuzz.triage.rootcause), so a
    candidate cannot drift to another exception that shares the coarse
    signature; () for other kinds."""
    if signature.kind != "divergence":
        return ()
    from fuzz.triage.rootcause import exception_fingerprint, message_template

    fp = exception_fingerprint(outcomes)
    return (fp.eager_type, fp.compiled_type, message_template(fp.message))


def eager_behaviour(outcomes: list[Outcome]) -> tuple:
    """Eager's kind of behaviour per call of the first outcome: the exception
    type, "returned", or for a returned value the type its repr starts with
    (``tensor``, ``list_reverseiterator``): a candidate that makes eager raise
    what it did not, or return another kind of value, is another program."""
    for o in outcomes:
        if o.eager:
            return tuple((r.label, r.exc_type or _value_kind(r.value)) for r in o.eager)
    return ()


_VALUE_KIND = re.compile(r"^[<(\[{]*\s*([A-Za-z_][\w.]*)?")


def _value_kind(value: str) -> str:
    match = _VALUE_KIND.match(value or "")
    return f"returned {match.group(1) if match and match.group(1) else (value or '')[:1]}"
