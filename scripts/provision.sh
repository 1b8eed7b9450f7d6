#!/usr/bin/env bash
# Provision everything tcfuzz needs, idempotently:
#   1. the host env .venv (tcfuzz, hypothesis, tox, tox-uv, pytest);
#   2. the interpreters under test: CPython 3.11, 3.12, 3.13 and 3.13t, found
#      under pyenv's versions folder or uv's, installed with uv where it can
#      reach python-build-standalone, and 3.13t built from Debian's source
#      package as a last resort (scripts/build-python-3.13t.sh);
#   3. a folder of python3.X links (${TCFUZZ_CACHE}/bin) that tox-uv searches;
#   4. the tox envs py311, py312, py313, py313t (the worker environments).
# Set TCFUZZ_PYTHONS="3.11 3.13t" to provision a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${TCFUZZ_CACHE:-$HOME/.cache/tcfuzz}
PYTHONS=${TCFUZZ_PYTHONS:-3.11 3.12 3.13 3.13t}
PYENV_VERSIONS=${PYENV_ROOT:-$HOME/.pyenv}/versions

step() { printf '[provision] %s\n' "$*" >&2; }
fail() { printf '[provision] error: %s\n' "$*" >&2; exit 1; }

# Python 3.X from pyenv's versions folder (its shims run only the global one).
find_pyenv() {
  local minor=$1 best=""
  for dir in "$PYENV_VERSIONS"/"$minor".*; do
    [ -x "$dir/bin/python$minor" ] && best="$dir/bin/python$minor"
  done
  [ -n "$best" ] && printf '%s\n' "$best"
}

# 1. Host env.
HOST_PY=""
for cand in "$(find_pyenv 3.11 || true)" "$(find_pyenv 3.12 || true)" "$(command -v python3.11 || true)" "$(command -v python3 || true)"; do
  if [ -n "$cand" ] && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then HOST_PY=$cand; break; fi
done
[ -n "$HOST_PY" ] || fail "no Python 3.11+ for the host env: install one (pyenv install 3.11, or apt-get install python3.11)"
if [ ! -x .venv/bin/python ]; then
  step "creating the host env .venv with $HOST_PY"
  "$HOST_PY" -m venv .venv || fail "python -m venv failed (on Debian: apt-get install python3-venv)"
fi
if [ ! -f .venv/.tcfuzz-installed ] || [ pyproject.toml -nt .venv/.tcfuzz-installed ]; then
  step "installing tcfuzz into .venv (hypothesis, tox, tox-uv, pytest)"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[test]' || fail "pip install -e .[test] failed"
  touch .venv/.tcfuzz-installed
fi
UV=$ROOT/.venv/bin/uv
[ -x "$UV" ] || fail "uv is missing from .venv (it comes with tox-uv): rm .venv/.tcfuzz-installed and rerun"

# 2 and 3. Interpreters and the folder of links.
mkdir -p "$CACHE/bin"
for name in $PYTHONS; do
  minor=${name%t}
  exe=""
  if [ "$name" = "$minor" ]; then
    exe=$(find_pyenv "$minor" || true)
    [ -n "$exe" ] || exe=$("$UV" python find --system "cpython$minor" 2>/dev/null || true)
    if [ -z "$exe" ]; then
      step "installing CPython $minor with uv"
      "$UV" python install "$minor" >&2 && exe=$("$UV" python find "cpython$minor")
    fi
  else
    exe=$("$UV" python find --system "cpython${minor}t" 2>/dev/null || true)
    if [ -z "$exe" ] && [ -x "$CACHE/python/3.13t/bin/python3.13t" ]; then exe=$CACHE/python/3.13t/bin/python3.13t; fi
    if [ -z "$exe" ]; then
      step "trying uv python install ${minor}t"
      if timeout 300 "$UV" python install "${minor}t" >&2 2>/dev/null; then
        exe=$("$UV" python find "cpython${minor}t" || true)
      fi
    fi
    if [ -z "$exe" ]; then
      step "uv cannot download ${minor}t here: building it from Debian's source package (about 6 min)"
      bash scripts/build-python-3.13t.sh || fail "building 3.13t failed (see the log named above)"
      exe=$CACHE/python/3.13t/bin/python3.13t
    fi
  fi
  [ -n "$exe" ] && [ -x "$exe" ] || fail "no CPython $name found: install it (uv python install $name, or pyenv install $minor)"
  ln -sfn "$exe" "$CACHE/bin/python$name"
  step "python$name -> $exe"
done

# 4. Worker envs.
envs=$(for n in $PYTHONS; do printf 'py%s,' "${n//./}"; done); envs=${envs%,}
step "creating tox envs $envs (torch is pinned in tox.ini; first time: several GB)"
PATH="$CACHE/bin:$ROOT/.venv/bin:$PATH" .venv/bin/tox run -q -e "$envs" --notest >&2 \
  || fail "tox could not create the envs $envs (see tox's output above)"
step "ready"
