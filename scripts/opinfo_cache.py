"""Write fuzz/generate/data/opinfo.json: the OpInfo metadata the tensor generator reads.

Run once per torch release, in a worker env (torch's test metadata is not a
host dependency)::

    .tox/py312/bin/python scripts/opinfo_cache.py

(``op_db`` imports ``expecttest``, which the worker envs lack: put it on
``PYTHONPATH`` first, e.g. ``pip install --target /tmp/deps expecttest``.)

For every entry of ``torch.testing._internal.common_methods_invocations.op_db``
(torch's own operator test database) it records the name, variant, OpInfo
class (UnaryUfuncInfo, BinaryUfuncInfo, ReductionOpInfo, ...), the dtypes it
supports on CPU, its unary domain where it declares one, its result-dtype flags
(``promotes_int_to_float``, ``always_returns_bool``, ``promotes_int_to_int64``), and whether it has a
method, an in-place and an ``out=`` variant and supports autograd. The output
is sorted, so a rerun on the same torch writes the same file.
"""

from __future__ import annotations

import json
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "fuzz" / "generate" / "data" / "opinfo.json"


def _dtype_name(dtype: object) -> str:
    return str(dtype).removeprefix("torch.")


def main() -> int:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    entries = []
    for op in op_db:
        domain = getattr(op, "domain", None)
        entries.append({
            "name": op.name,
            "variant": op.variant_test_name,
            "kind": type(op).__name__,
            "aten_name": op.aten_name,
            "dtypes": sorted(_dtype_name(d) for d in op.dtypes),
            "domain": list(domain) if domain is not None else None,
            "method": op.method_variant is not None,
            "inplace": op.inplace_variant is not None,
            "out": bool(op.supports_out),
            "autograd": bool(op.supports_autograd),
            # result-dtype rules of the ufunc and reduction OpInfo classes
            "promotes_int_to_float": bool(getattr(op, "promotes_int_to_float", False)),
            "always_returns_bool": bool(getattr(op, "always_returns_bool", False)),
            "promotes_int_to_int64": bool(getattr(op, "promotes_int_to_int64", False)),
        })
    entries.sort(key=lambda e: (e["name"], e["variant"]))
    data = {"torch": torch.__version__.split("+")[0], "ops": entries}
    # one entry per line, so a new torch release shows as a readable diff
    lines = [json.dumps(entry, sort_keys=True) for entry in entries]
    body = ",\n".join(lines)
    OUT.write_text(f'{{"torch": {json.dumps(data["torch"])}, "ops": [\n{body}\n]}}\n')
    print(f"wrote {len(entries)} OpInfo entries of torch {data['torch']} to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
