#!/usr/bin/env bash
# The one command that checks tcfuzz's GPU path (issue 8) on a machine with an
# NVIDIA GPU, using the python and torch already there (no network needed):
#   1. finds that python (--python PATH, else $TCFUZZ_GPU_PYTHON, else the
#      first python3 on PATH that has torch) and installs what the host side
#      needs beyond it from carried wheels in .whl/, if any (see below);
#   2. runs the GPU tests (pytest -m gpu tests/gpu): Inductor through Triton,
#      a device-side assert recorded as a crash and its worker replaced, a
#      case found on CUDA that runs on CUDA standalone, repro on CUDA;
#   3. runs a short campaign with --device cuda --backend inductor, then the
#      same campaign (same seed, same programs) with --device cpu;
#   4. prints a table: programs, runs, runs per second, verdicts and buckets
#      for cuda and cpu, and writes it with both summaries to --out DIR.
#
#   scripts/gpu-check.sh [--python PATH] [--budget 150s] [--jobs 4] [--out DIR]
#   scripts/gpu-check.sh --dry-run [--python PATH]    # here, without a GPU
#   scripts/gpu-check.sh --prepare-wheels             # here, with PyPI
#
# --dry-run checks everything but the CUDA calls, on the CPU and all at once:
# the interpreter and the wheels, that the GPU tests skip with a reason, that
# `tcfuzz run --device cuda` is refused with a one-line error, that a
# simulated CUDA fault (backend tcfuzz_cuda_fault) is a crash and the worker
# is replaced, and both campaigns with --device cpu, the eager backend and a
# few programs each (default python: the 3.12 worker env). It takes 1-2
# minutes on a quiet 2-core machine, 4-5 on a busy one.
#
# Wheels: a machine without network (the lent GPU machine has torch 2.11,
# triton 3.6, rich and pytest, but not pysource-minimize or hypothesmith, and
# another hypothesis) gets the host side's dependencies as wheels. Make them
# here with `scripts/gpu-check.sh --prepare-wheels`: it downloads the versions
# of the host env .venv for CPython 3.12 on x86-64 into .whl/ (git-ignored;
# about 7 MiB). Carry .whl with the repo; this script installs them into a
# private folder on PYTHONPATH (never into the machine's python).
#
# Exit code: 0 every step passed, 1 a step failed (its output says which).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

START_S=$SECONDS
DRY_RUN=0
PREPARE=0
PYTHON=${TCFUZZ_GPU_PYTHON:-}
BUDGET=150s      # per campaign; two campaigns plus the tests fit in 10 minutes
JOBS=""          # workers per campaign (one interpreter): 4 on the GPU machine's 16 cores, 1 in a dry run
DRY_PROGRAMS=3   # programs per campaign in a dry run, with the eager backend: Inductor's
                 # first compile alone takes minutes on a busy 2-core machine
SEED=20261201    # the same programs on cuda and on cpu
OUT=""
# Host-side packages: the lent machine lacks pysource-minimize, hypothesmith
# and its lark and libcst, and has another hypothesis; the rest make the
# wheels complete for any python with torch (a worker env, in a dry run).
WHEELS="hypothesis hypothesmith lark libcst pysource-minimize sortedcontainers pyyaml rich markdown-it-py mdurl pygments"

step() { printf '\n[gpu-check +%ss] %s\n' "$((SECONDS - START_S))" "$*" >&2; }
fail() { printf '[gpu-check] FAILED: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) DRY_RUN=1 ;;
    --prepare-wheels) PREPARE=1 ;;
    --python) PYTHON=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ $PREPARE = 1 ]; then
  [ -x .venv/bin/python ] || fail "no host env .venv: run scripts/provision.sh first"
  pins=$(.venv/bin/python - $WHEELS <<'EOF'
import importlib.metadata as m, sys
print(" ".join(f"{name}=={m.version(name)}" for name in sys.argv[1:]))
EOF
)
  step "downloading $pins into .whl/ (CPython 3.12, x86-64 Linux)"
  rm -rf .whl && mkdir -p .whl
  .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl $pins
  ls -l .whl >&2
  exit 0
fi

JOBS=${JOBS:-$([ $DRY_RUN = 1 ] && echo 1 || echo 4)}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tcfuzz-gpu-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT=${OUT:-reports/gpu-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"

# 1. The python with torch, and the host side's dependencies.
if [ -z "$PYTHON" ]; then
  if [ $DRY_RUN = 1 ]; then
    PYTHON=$ROOT/.tox/py312/bin/python
  else
    for candidate in $(type -ap python3 python3.12); do
      if "$candidate" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' 2>/dev/null; then
        PYTHON=$candidate; break
      fi
    done
  fi
fi
[ -n "$PYTHON" ] && [ -x "$PYTHON" ] || fail "no python with torch found: pass --python PATH"
"$PYTHON" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' \
  || fail "$PYTHON has no torch: pass --python the path of a python that has it"
step "python: $PYTHON ($("$PYTHON" -c 'import sys, importlib.metadata as m; print(sys.version.split()[0], "torch", m.version("torch"))'))"

HOST=$PYTHON
if compgen -G ".whl/*.whl" >/dev/null; then
  step "installing the carried wheels into $WORK/site"
  if "$PYTHON" -m pip --version >/dev/null 2>&1; then
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/site" \
      .whl/*.whl || fail "the wheels in .whl/ do not install into $PYTHON: make them again with --prepare-wheels"
  else  # an env without pip (uv's): a wheel unpacked is an installed package as far as imports go
    "$PYTHON" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' \
      "$WORK/site" .whl/*.whl
  fi
  export PYTHONPATH=$WORK/site:$ROOT
elif [ -x .venv/bin/python ]; then
  step "no .whl/: the host side runs in .venv (make wheels with --prepare-wheels to test them too)"
  HOST=$ROOT/.venv/bin/python
  export PYTHONPATH=$ROOT
else
  export PYTHONPATH=$ROOT
fi
"$HOST" -c 'import hypothesis, hypothesmith, pysource_minimize, rich, pytest, fuzz.cli' \
  || fail "the host side cannot import its dependencies with $HOST: carry wheels (--prepare-wheels) or run scripts/provision.sh"
export TCFUZZ_GPU_PYTHON=$PYTHON
tcfuzz() { "$HOST" -m fuzz.cli "$@"; }

# 2.-3. The GPU tests, then the campaigns: cuda, then cpu (same seed, same
# programs). A dry run runs its checks at once (nothing is timed there) and
# adds two: the refusal of --device cuda and a simulated CUDA fault.
gpu_tests() {
  "$HOST" -m pytest -m gpu -rs -q -p no:cacheprovider tests/gpu >"$OUT/gpu-tests.log" 2>&1
}
check_gpu_tests() {  # status
  cat "$OUT/gpu-tests.log" >&2
  [ "$1" = 0 ] || fail "GPU tests (log: $OUT/gpu-tests.log)"
  if [ $DRY_RUN = 1 ]; then
    grep -q "SKIPPED.*no GPU" "$OUT/gpu-tests.log" || fail "the GPU tests did not skip with the reason"
    if grep -q " passed" "$OUT/gpu-tests.log"; then fail "GPU tests passed on a machine without a GPU?"; fi
  fi
}
refusal() {
  tcfuzz run --device cuda --python "$PYTHON" --programs 1 --out "$WORK/refused" 2>"$WORK/refusal.txt"
}
check_refusal() {  # status
  step "tcfuzz run --device cuda is refused with one line (no GPU here)"
  cat "$WORK/refusal.txt" >&2
  [ "$1" = 2 ] && [ "$(wc -l <"$WORK/refusal.txt")" = 1 ] && grep -q "sees no GPU" "$WORK/refusal.txt" \
    || fail "expected exit 2 and one line naming the problem, got exit $1"
}
simulated_fault() {
  printf 'import torch\n\ndef f(x):\n    return x.sin() + 1\n\ndef inputs():\n    return (torch.ones(37),)\n' \
    >"$WORK/case.py"
  tcfuzz repro "$WORK/case.py" --python "$PYTHON" --backend tcfuzz_cuda_fault,eager --log-dir "$WORK/logs" \
    >"$WORK/repro.txt" 2>&1
}
check_simulated_fault() {  # status
  step "a simulated CUDA fault (backend tcfuzz_cuda_fault) is a crash naming the kernel; the next run is fine"
  cat "$WORK/repro.txt" >&2
  # the repro table's cells are triage's (fuzz.triage.matrix.cell_text): "crash * · <id> / <detail…> · 0 gb"
  [ "$1" = 1 ] && grep -Eq "crash \* · [0-9a-f]+ / CUDA error: an illegal memory a.*  match" "$WORK/repro.txt" \
    && grep -q "compiled:triton_poi_fused_simulated" "$WORK/repro.txt" || fail "simulated CUDA fault (exit $1)"
}
if [ $DRY_RUN = 1 ]; then
  AMOUNT=(--programs "$DRY_PROGRAMS"); BACKEND=eager
else
  AMOUNT=(--budget "$BUDGET"); BACKEND=inductor
fi
campaign() {  # label device
  tcfuzz run --python "$PYTHON" --backend "$BACKEND" --device "$2" "${AMOUNT[@]}" --jobs "$JOBS" --seed "$SEED" \
    --no-minimize --out "$WORK/$1" --corpus "$WORK/corpus" --log-dir "$WORK/$1/logs" >"$WORK/$1.log" 2>&1
}
check_campaign() {  # label status
  step "campaign $1: --device $([ $DRY_RUN = 1 ] && echo cpu || echo "$1") --backend $BACKEND ${AMOUNT[*]} --jobs $JOBS --seed $SEED"
  cat "$WORK/$1.log" >&2
  [ "$2" = 0 ] || [ "$2" = 1 ] || fail "campaign $1 exited $2 (logs: $WORK/$1/logs)"
  cp "$WORK/$1/summary.json" "$OUT/$1-summary.json"
}
if [ $DRY_RUN = 1 ]; then
  step "at once: the GPU tests, the refusal of --device cuda, a simulated CUDA fault, campaigns cuda and cpu on the cpu"
  set +e
  gpu_tests & p1=$!; refusal & p2=$!; simulated_fault & p3=$!; campaign cuda cpu & p4=$!; campaign cpu cpu & p5=$!
  wait $p1; s1=$?; wait $p2; s2=$?; wait $p3; s3=$?; wait $p4; s4=$?; wait $p5; s5=$?
  set -e
  step "GPU tests (pytest -m gpu tests/gpu)"
  check_gpu_tests $s1
  check_refusal $s2
  check_simulated_fault $s3
  check_campaign cuda $s4
  check_campaign cpu $s5
else  # one after the other, so that each campaign has the machine to itself
  step "GPU tests (pytest -m gpu tests/gpu)"
  set +e; gpu_tests; status=$?; set -e
  check_gpu_tests $status
  for label in cuda cpu; do
    set +e; campaign $label $label; status=$?; set -e
    check_campaign $label $status
  done
fi

# 4. The table.
"$HOST" - "$OUT" "$DRY_RUN" <<'EOF' | tee "$OUT/table.txt"
import json, sys
from pathlib import Path

out, dry = Path(sys.argv[1]), sys.argv[2] == "1"
rows = [("device", "backend", "programs", "runs", "runs/s", "verdicts", "buckets")]
for label in ("cuda", "cpu"):
    s = json.loads((out / f"{label}-summary.json").read_text())
    kinds = {}
    for b in s["buckets"]:
        kinds[b["kind"]] = kinds.get(b["kind"], 0) + 1
    name = f"{label} (dry run: {s.get('device', 'cpu')})" if dry and label == "cuda" else s.get("device", label)
    rows.append((name, ",".join(s.get("backends", [])), str(s["programs"]), str(s["runs"]),
                 f"{s['runs'] / s['elapsed_s']:.3f}" if s["elapsed_s"] else "0",
                 ", ".join(f"{k} {v}" for k, v in s["verdicts"].items() if v) or "-",
                 f"{len(s['buckets'])}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})" if kinds else "")))
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for n, r in enumerate(rows):
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if n == 0:
        print("  ".join("-" * w for w in widths))
EOF
step "passed in $((SECONDS - START_S)) s; results in $OUT"
