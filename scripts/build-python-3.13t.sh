#!/usr/bin/env bash
# Build a free-threaded CPython 3.13 (3.13t) from Debian trixie's python3.13
# source package, for machines where `uv python install 3.13t` cannot reach
# GitHub. Idempotent: a finished build is reused. Installs into
#   ${TCFUZZ_CACHE}/python/3.13t   (default ~/.cache/tcfuzz)
# Uses a private apt sources list and state dir; never edits the system's.
# Dynamo needs 3.13.3 or later on 3.13t; trixie ships 3.13.5.
set -euo pipefail

CACHE=${TCFUZZ_CACHE:-$HOME/.cache/tcfuzz}
PREFIX=$CACHE/python/3.13t
WORK=$CACHE/build/python3.13t
APT=$CACHE/apt
MIRROR=${TCFUZZ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
JOBS=${TCFUZZ_BUILD_JOBS:-$(nproc)}

step() { printf '[3.13t] %s\n' "$*" >&2; }
fail() { printf '[3.13t] error: %s\n' "$*" >&2; exit 1; }

if [ -x "$PREFIX/bin/python3.13t" ] && "$PREFIX/bin/python3.13t" -c 'import sys, ssl, sqlite3, ctypes; import site, os; assert not sys._is_gil_enabled(); assert site.getsitepackages()[0].startswith(sys.prefix)' 2>/dev/null; then
  step "already built: $PREFIX/bin/python3.13t"
  exit 0
fi

if ! dpkg -s libgdbm-dev >/dev/null 2>&1; then
  step "installing build dependency libgdbm-dev"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  { $SUDO apt-get install -y -q libgdbm-dev >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q libgdbm-dev >/dev/null; }; } \
    || fail "cannot install libgdbm-dev: run (sudo) apt-get install libgdbm-dev, then rerun"
fi

mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc/preferences.d" "$WORK"
printf 'deb-src [trusted=yes] %s trixie main\n' "$MIRROR" >"$APT/etc/sources.list"
APTOPTS=(-o "Dir::Etc::SourceList=$APT/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
         -o "Dir::Etc::Preferences=/nonexistent" -o "Dir::Etc::PreferencesParts=$APT/etc/preferences.d"
         -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
         -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")

# Build pristine CPython from the package's upstream tarball (*.orig.tar.xz):
# Debian's patches relocate site-packages and disable ensurepip, which breaks
# virtual environments made from a --prefix install.
ORIG=$(ls "$WORK"/python3.13_3.13.*.orig.tar.xz 2>/dev/null | head -n1 || true)
if [ -z "$ORIG" ]; then
  step "fetching the trixie python3.13 source package index ($MIRROR)"
  apt-get "${APTOPTS[@]}" -q update >"$WORK/apt-update.log" 2>&1 || fail "apt-get update failed, see $WORK/apt-update.log"
  step "downloading the python3.13 source package"
  (cd "$WORK" && apt-get "${APTOPTS[@]}" -q source --download-only python3.13 >"$WORK/apt-source.log" 2>&1) \
    || fail "apt-get source python3.13 failed, see $WORK/apt-source.log"
  ORIG=$(ls "$WORK"/python3.13_3.13.*.orig.tar.xz | head -n1)
fi
SRC=$WORK/upstream
if [ ! -x "$SRC/configure" ]; then
  step "unpacking $(basename "$ORIG")"
  rm -rf "$SRC"; mkdir -p "$SRC"
  tar -xf "$ORIG" -C "$SRC" --strip-components=1 || fail "cannot unpack $ORIG"
fi
step "source: $SRC"

BUILD=$WORK/build-upstream
mkdir -p "$BUILD"
cd "$BUILD"
# Stamps make an interrupted run resume at the step that failed.
if [ ! -f .configured ]; then
  step "configure --disable-gil (about 30 s)"
  "$SRC/configure" --prefix="$PREFIX" --disable-gil --with-ensurepip=install \
    >"$WORK/configure.log" 2>&1 || fail "configure failed, see $WORK/configure.log"
  touch .configured
fi
if [ ! -f .built ]; then
  step "make -j$JOBS (about 4 min on 2 cores)"
  make -j"$JOBS" >"$WORK/make.log" 2>&1 || fail "make failed, see $WORK/make.log"
  touch .built
fi
step "make install (about 1 min)"
rm -rf "$PREFIX"
make install >"$WORK/install.log" 2>&1 || fail "make install failed, see $WORK/install.log"
"$PREFIX/bin/python3.13t" -c 'import sys, ssl, sqlite3, ctypes; import site, os; assert not sys._is_gil_enabled(); assert site.getsitepackages()[0].startswith(sys.prefix); print(sys.version)' >&2 \
  || fail "the built interpreter does not run or has the GIL on"
step "done: $PREFIX/bin/python3.13t"
