"""A corpus case rewritten in place with a smaller program (``tcfuzz minimize CASE --in-place``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import casefile
from fuzz.campaign.interpreters import Interpreter
from fuzz.corpus import store
from fuzz.errors import CorpusError
from fuzz.triage import known
from fuzz.triage.signature import Kind, Signature


def rewrite_case(path: Path, table: dict[str, Any], texts: Sequence[str], signature: Signature,
                 interpreters: Sequence[Interpreter], *, smaller: bool) -> tuple[bool, str]:
    """Replace corpus case ``path``'s program by the minimised one of
    ``texts`` (fuzz.corpus.render.render_case_runners, tried in order: the
    first that reproduces is written) when it is ``smaller``, keeps the
    case's bucket (``signature.id`` is the case's name) and reproduces
    standalone (``python CASE`` exits non-zero) on every one of
    ``interpreters`` that the case's table names. A divergence whose
    minimised program has another root-cause key (the same observation and
    interpreters) is written under its new id, the old file removed and the
    re-key recorded in known-issues.toml (fuzz.triage.known.record_rekey).
    The case's ``table``
    (first-seen, count, replays) stays, but for ``compile``, the settings the
    minimiser kept, and ``torch``, the release it was confirmed on. Returns (rewritten, why). Raises CorpusError if the
    case cannot be written."""
    if not smaller:
        return False, "not rewritten: the minimiser found nothing smaller"
    rekeyed = _rekeyed(path, table, signature)
    if not table or (path.stem != signature.id and not rekeyed):
        return False, (f"not rewritten: the minimised program's bucket is {signature.id}, not the case's "
                       f"{path.stem}: write it with -o and file it by hand")
    shown = [i for i in interpreters if i.name in set(table.get("interpreters", []))]
    codes: dict[str, int] = {}
    for text in texts:
        codes = store.run_standalone(text, shown)
        if all(code not in (0, store.DOES_NOT_PARSE) for code in codes.values()):
            # the settings the minimiser kept, and the torch it confirmed the case on (the pin's)
            fresh = casefile.read_table(text)
            kept = {k: v for k, v in table.items() if k != "compile"}
            kept.update({k: fresh[k] for k in ("compile", "torch") if k in fresh})
            target = path.with_name(f"{signature.id}.py") if rekeyed else path
            if rekeyed:
                kept["signature"] = signature.key
            try:
                with casefile.locked(target):  # the same case, rewritten: not store.write_case's merge of a finding
                    casefile.atomic_write(target, casefile.replace_table(text, kept))
                if rekeyed:
                    known.record_rekey(path.parent.parent, path.stem, signature.id,
                                       "re-minimised in place (tcfuzz minimize --in-place), re-keyed by root cause")
                    path.unlink()
            except OSError as e:
                raise CorpusError(f"cannot rewrite corpus case {path}: {e}; check the folder's permissions") from None
            if rekeyed:
                return True, f"rewritten as {target.name}, re-keyed by root cause (python CASE exit codes {codes})"
            return True, f"rewritten (python CASE exit codes {codes})"
    return False, f"not rewritten: python CASE does not reproduce standalone (exit codes {codes})"


def _rekeyed(path: Path, table: dict[str, Any], signature: Signature) -> bool:
    """Whether the minimised divergence ``signature`` is the case's own
    bug under a new root-cause key: the same observation, stage and
    interpreters (``Signature.base``), another skeleton, and no case of that
    id yet."""
    if not table or signature.kind != Kind.DIVERGENCE or path.stem == signature.id:
        return False
    try:
        old = Signature.parse(str(table.get("signature", "")))
    except ValueError:
        return False
    return old.base() == signature.base() and not path.with_name(f"{signature.id}.py").exists()
