"""Root-cause keys of divergences: one key per bug, whatever showed it.

A divergence is seen through a channel (``Channel``: the return value,
printed text, the arguments, torch's global state, module globals, an
exception, a later ``backward()``). One Dynamo bug is seen through all of
them (the grad-mode object created before a graph break and entered after it
shows in the value, in ``print``, in grad mode after the call and in a
``backward()`` that raises), so the channel is a label of the bucket and not
part of its key. The key (``RootCause.text``, inside the braces of a
minimised divergence's signature detail) is, by ``DivergenceClass``:

  wrong-result     "wrong-result: <skeleton>": the canonical skeleton of the
                   minimised program (fuzz.triage.skeleton), since a wrong
                   result has no stack; an exception that only observes a
                   wrong grad mode (autograd's "does not require grad",
                   ``OBSERVATION_MESSAGES``) is a wrong result seen through the
                   ``grad`` channel
  raises           "raises T: <message>": compiled code raised T where eager
                   returned; the message of the compiled exception, with the
                   program's own names as ``'<name>'`` and numbers as N, is the
                   stack a wrong result lacks (the generator-``send`` bug is
                   "'tuple_iterator' object has no attribute 'send'" in every
                   program that shows it); an empty message adds the skeleton
  other-exception  eager raised A, compiled B: "raises B: <message>" as above
                   when B has a message (what eager raised is the program's
                   own, and one bug is seen with eager returning or raising:
                   the comprehension-shadow bug of f511b6484939 shows as
                   None->UnboundLocalError and TypeError->UnboundLocalError),
                   else "A->B: in <skeleton>"
  message          "message T: <message>": the same type, another message
  not-raised       "not-raised T: <skeleton>": compiled code returned where
                   eager raised T (the eager message is the program's own)

The key is computed on the host without torch from the minimised source and
the outcome's recorded messages; ``exception_fingerprint`` takes what the
outcomes say, ``root_cause`` builds the key.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import re
from collections.abc import Iterable

from harness.outcome import Aspect, CallResult, Outcome, Verdict
from fuzz.triage.skeleton import one_line, skeleton

# Exception messages that only observe a wrong result (a tensor computed with
# the wrong grad mode), after torch/csrc/autograd's wording: their bug is the
# grad mode, keyed by the program's skeleton like any wrong result.
OBSERVATION_MESSAGES = (
    re.compile(r"does not require grad and does not have a grad_fn"),
    re.compile(r"One of the differentiated Tensors does not require grad"),
)
# Longest message template kept in a key, in characters.
MAX_MESSAGE_CHARS = 120

_QUOTED = re.compile(r"'([A-Za-z_]\w*)'")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![\w'])\d+(?![\w'])")
_SPACE = re.compile(r"\s+")


class DivergenceClass(str, enum.Enum):
    """What kind of wrong behaviour compiled code had (module docstring)."""

    WRONG_RESULT = "wrong-result"
    RAISES = "raises"
    OTHER_EXCEPTION = "other-exception"
    MESSAGE = "message"
    NOT_RAISED = "not-raised"

    def __str__(self) -> str:
        return self.value

    def describe(self) -> str:
        return {
            "wrong-result": "compiled code computed another result, printed other text or left other state",
            "raises": "compiled code raised where eager returned",
            "other-exception": "eager and compiled code raised different exception types",
            "message": "eager and compiled code raised one type with different messages",
            "not-raised": "compiled code returned where eager raised",
        }[self.value]


class Channel(str, enum.Enum):
    """How a divergence was seen: a label of its bucket, never in its key."""

    VALUE = "value"
    STDOUT = "stdout"
    MUTATION = "mutation"
    GLOBAL_STATE = "global-state"
    GLOBALS = "globals"
    EXCEPTION = "exception"
    GRAD = "grad"

    def __str__(self) -> str:
        return self.value

    def describe(self) -> str:
        return {
            "value": "the return value", "stdout": "printed text", "mutation": "the arguments after the call",
            "global-state": "grad mode or default dtype after the call", "globals": "module globals after the run",
            "exception": "an exception", "grad": "a later backward() or autograd call",
        }[self.value]


@dataclasses.dataclass(frozen=True)
class Fingerprint:
    """What the outcomes say about a divergence's exceptions: the eager and
    compiled exception types (None: returned) and the compiled (for
    not-raised: the eager) message, at the first differing call."""

    eager_type: str | None = None
    compiled_type: str | None = None
    message: str = ""

    def to_json(self) -> dict[str, str | None]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class RootCause:
    """A divergence's root-cause key (``text``) and its labels: the channel
    it was seen through and the skeleton of its program."""

    klass: DivergenceClass
    text: str
    channel: Channel
    skeleton: str


def program_names(source: str) -> frozenset[str]:
    """Names the program binds (variables, functions, classes, arguments):
    what a message template abstracts. Empty for a source that does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
    return frozenset(names)


def message_template(message: str, names: Iterable[str] = ()) -> str:
    """``message`` with the program's own quoted names as ``'<name>'``,
    addresses and numbers as N, whitespace runs as one space, ``|`` as ``/``,
    first line only, at most MAX_MESSAGE_CHARS characters. Idempotent."""
    names = set(names)
    text = (message.strip().splitlines() or [""])[0]
    text = _QUOTED.sub(lambda m: "'<name>'" if m.group(1) in names else m.group(0), text)
    text = _ADDRESS.sub("N", text)
    text = _NUMBER.sub("N", text)
    return _SPACE.sub(" ", text).replace("|", "/").strip()[:MAX_MESSAGE_CHARS]


def _split_types(error_type: str) -> tuple[str | None, str | None]:
    eager, _, compiled = error_type.partition("->")
    return (None if eager in ("", "None") else eager), (None if compiled in ("", "None") else compiled)


def _first_differing(results: list[CallResult], label: str) -> CallResult | None:
    return next((r for r in results if r.label == label), results[0] if results else None)


def exception_fingerprint(outcomes: Iterable[Outcome]) -> Fingerprint:
    """The Fingerprint of the first divergence among ``outcomes`` that
    concerns an exception (the caller passes the outcomes of one finding);
    an empty one when none does."""
    for o in outcomes:
        if o.verdict is not Verdict.DIVERGENCE or o.aspect not in (Aspect.EXCEPTION, Aspect.EXCEPTION_MESSAGE):
            continue
        eager = _first_differing(o.eager, o.call or "fresh")
        compiled = _first_differing(o.compiled, o.call or "fresh")
        if o.aspect is Aspect.EXCEPTION_MESSAGE:
            kind = o.error_type.split("->", 1)[0]
            return Fingerprint(kind, kind, compiled.exc_message if compiled else o.error_message)
        eager_type, compiled_type = _split_types(o.error_type)
        if compiled_type is None:
            return Fingerprint(eager_type, None, eager.exc_message if eager else o.error_message)
        return Fingerprint(eager_type, compiled_type, compiled.exc_message if compiled else o.error_message)
    return Fingerprint()


def fingerprint_of_detail(observed: str, message: str = "") -> Fingerprint:
    """The Fingerprint an observed divergence detail names
    ("exception:None->AttributeError@cached", "exception-message:ValueError"),
    with ``message`` (a recorded one); empty for other aspects."""
    detail = observed.split("@", 1)[0]
    if detail.startswith("exception-message:"):
        kind = detail.split(":", 1)[1]
        return Fingerprint(kind, kind, message)
    if detail.startswith("exception:"):
        eager, compiled = _split_types(detail.split(":", 1)[1])
        return Fingerprint(eager, compiled, message)
    return Fingerprint()


def channel_of(observed: str, fingerprint: Fingerprint) -> Channel:
    """The channel of an observed divergence detail ("stdout@guard" -> stdout)."""
    aspect = observed.split("@", 1)[0].split(":", 1)[0]
    if aspect in (Aspect.EXCEPTION.value, Aspect.EXCEPTION_MESSAGE.value):
        if any(p.search(fingerprint.message) for p in OBSERVATION_MESSAGES):
            return Channel.GRAD
        return Channel.EXCEPTION
    try:
        return Channel(aspect)
    except ValueError:
        return Channel.VALUE


def root_cause(observed: str, source: str, *, stage: str, fingerprint: Fingerprint = Fingerprint(),
               entry: str = "f", inputs: str = "inputs") -> RootCause:
    """The RootCause of a divergence observed as ``observed`` (its detail
    before minimisation, fuzz.triage.signature.bug_detail) in the minimised
    program ``source`` at ``stage``. Raises SyntaxError if ``source`` does
    not parse."""
    shape = skeleton(source, stage=stage, entry=entry, inputs=inputs)
    line = one_line(shape)
    if not fingerprint.eager_type and not fingerprint.compiled_type:
        fingerprint = fingerprint_of_detail(observed, fingerprint.message)
    channel = channel_of(observed, fingerprint)
    names = program_names(source)
    message = message_template(fingerprint.message, names)
    eager, compiled = fingerprint.eager_type, fingerprint.compiled_type
    if channel is Channel.GRAD or (eager is None and compiled is None):
        return RootCause(DivergenceClass.WRONG_RESULT, f"wrong-result: {line}", channel, shape)
    if compiled is None:
        return RootCause(DivergenceClass.NOT_RAISED, f"not-raised {eager}: {line}", channel, shape)
    if eager == compiled:
        klass, head = DivergenceClass.MESSAGE, f"message {compiled}"
    elif eager is None:
        klass, head = DivergenceClass.RAISES, f"raises {compiled}"
    elif message:
        # what eager raised later is the program's own doing: the compiled
        # exception's message is the bug's stack, as when eager returned
        klass, head = DivergenceClass.OTHER_EXCEPTION, f"raises {compiled}"
    else:
        klass, head = DivergenceClass.OTHER_EXCEPTION, f"{eager}->{compiled}"
    return RootCause(klass, f"{head}: {message}" if message else f"{head}: in {line}", channel, shape)
