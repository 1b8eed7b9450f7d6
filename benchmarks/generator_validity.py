"""Share of generated programs that run eagerly without an unintended exception,
and whether eager runs are deterministic.

Usage (host venv; runs the programs in one worker-env process)::

    .venv/bin/python benchmarks/generator_validity.py [--programs 500] [--python 3.12] [--generator ours|graphs]

Prints the generation time per program (host), the validity rate (programs whose two eager runs, each calling f twice
on fresh inputs, raise nothing and agree) and the failures by exception type.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fuzz.campaign import interpreters  # noqa: E402
from fuzz.generate.sources import draw_program  # noqa: E402

RUN_EAGERLY = r"""
import contextlib, io, json, sys, types, traceback
import torch
from harness import compare
results = []
for seed, source in json.load(sys.stdin):
    outcome = []
    try:
        code = compile(source, f"<seed {seed}>", "exec", dont_inherit=True)
        runs = []
        for _ in range(2):
            module = types.ModuleType("prog")
            exec(code, module.__dict__)
            values = []
            for _ in range(2):
                torch.manual_seed(0)
                with contextlib.redirect_stdout(io.StringIO()) as out:
                    values.append(compare.snapshot(compare.drain(module.f(*module.inputs()))))
                values.append(out.getvalue())
            runs.append(values)
        same = compare.values_match(runs[0], runs[1])
        results.append([seed, "ok" if same else "nondeterministic", ""])
    except Exception as e:
        tb = traceback.extract_tb(e.__traceback__)
        results.append([seed, type(e).__name__, f"{e}"[:120] + f" @ line {tb[-1].lineno}: {tb[-1].line}"])
print(json.dumps(results))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=500)
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generator", default="ours", choices=("ours", "hypothesmith", "mutation", "graphs"))
    args = parser.parse_args()
    python = interpreters.resolve(args.python).python
    start = time.perf_counter()
    payload = [[seed, draw_program(seed, args.generator).source]
               for seed in range(args.seed, args.seed + args.programs)]
    generate_ms = (time.perf_counter() - start) * 1000 / args.programs
    result = subprocess.run([str(python), "-c", RUN_EAGERLY], input=json.dumps(payload), capture_output=True,
                            text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if result.returncode:
        print(result.stderr[-3000:])
        return 3
    rows = json.loads(result.stdout.strip().splitlines()[-1])
    kinds = collections.Counter(kind for _, kind, _ in rows)
    ok = kinds["ok"]
    print(f"{args.generator} on {args.python}: {ok}/{len(rows)} programs valid ({ok / len(rows):.1%}); "
          f"nondeterministic {kinds['nondeterministic']}; generation {generate_ms:.1f} ms/program")
    for kind, count in kinds.most_common():
        if kind != "ok":
            print(f"  {kind}: {count}")
    for seed, kind, detail in rows:
        if kind != "ok":
            print(f"  seed {seed}: {kind}: {detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
