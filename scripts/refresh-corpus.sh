#!/usr/bin/env bash
# Replay the whole corpus on every provisioned worker env (each with the
# newest torch release that has a wheel for its interpreter, see tox.ini) and
# record each result in the case's `replay` table ("<python>/<torch>" ->
# reproduces / does not reproduce); then print the corpus standing: live on
# the newest torch, fixed since a release, or shown only on 3.13t/2.12.0
# (`tcfuzz corpus-status`). Extra arguments go to pytest, e.g. -k divergence.
# About 3-6 minutes per env on 2 cores. Exit 0 unless a replay itself failed.
set -euo pipefail
cd "$(dirname "$0")/.."
envs=$(for n in $(cat .tox/pins/interpreters.txt 2>/dev/null || echo 3.11 3.12 3.13 3.13t); do printf 'py%s,' "${n//./}"; done)
envs=${envs%,}
PATH="${TCFUZZ_CACHE:-$HOME/.cache/tcfuzz}/bin:$PWD/.venv/bin:$PATH" \
  .venv/bin/tox run -q -e "$envs" -- --tcfuzz-record -q -p no:cacheprovider "$@" || true
exec .venv/bin/tcfuzz corpus-status
