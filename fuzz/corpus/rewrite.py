"""A corpus case rewritten in place with a smaller program (``tcfuzz minimize CASE --in-place``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import casefile
from fuzz.campaign.interpreters import Interpreter
from fuzz.corpus import store
from fuzz.errors import CorpusError
from fuzz.triage.signature import Signature


def rewrite_case(path: Path, table: dict[str, Any], texts: Sequence[str], signature: Signature,
                 interpreters: Sequence[Interpreter], *, smaller: bool) -> tuple[bool, str]:
    """Replace corpus case ``path``'s program by the minimised one of
    ``texts`` (fuzz.corpus.render.render_case_runners, tried in order: the
    first that reproduces is written) when it is ``smaller``, keeps the
    case's bucket (``signature.id`` is the case's name) and reproduces
    standalone (``python CASE`` exits non-zero) on every one of
    ``interpreters`` that the case's table names. The case's ``table``
    (first-seen, count, replays) stays, but for ``compile``, the settings the
    minimiser kept. Returns (rewritten, why). Raises CorpusError if the
    case cannot be written."""
    if not smaller:
        return False, "not rewritten: the minimiser found nothing smaller"
    if not table or path.stem != signature.id:
        return False, (f"not rewritten: the minimised program's bucket is {signature.id}, not the case's "
                       f"{path.stem}: write it with -o and file it by hand")
    shown = [i for i in interpreters if i.name in set(table.get("interpreters", []))]
    codes: dict[str, int] = {}
    for text in texts:
        codes = store.run_standalone(text, shown)
        if all(code not in (0, store.DOES_NOT_PARSE) for code in codes.values()):
            kept = {k: v for k, v in table.items() if k != "compile"}
            settings = casefile.read_table(text).get("compile")
            kept.update({"compile": settings} if settings else {})
            try:
                with casefile.locked(path):  # the same case, rewritten: not store.write_case's merge of a finding
                    casefile.atomic_write(path, casefile.replace_table(text, kept))
            except OSError as e:
                raise CorpusError(f"cannot rewrite corpus case {path}: {e}; check the folder's permissions") from None
            return True, f"rewritten (python CASE exit codes {codes})"
    return False, f"not rewritten: python CASE does not reproduce standalone (exit codes {codes})"
