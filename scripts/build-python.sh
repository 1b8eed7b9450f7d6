#!/usr/bin/env bash
# Build a CPython the machine cannot download (`uv python install` needs
# GitHub) from a Debian source package's upstream tarball:
#   bash scripts/build-python.sh 3.13t     # trixie's python3.13 (3.13.5), --disable-gil
#   bash scripts/build-python.sh 3.14      # sid's python3.14
#   bash scripts/build-python.sh 3.14t     # the same tarball, --disable-gil
#   bash scripts/build-python.sh 3.15 | 3.15t
# Idempotent: a finished build is reused; an interrupted one resumes at the
# step that failed. Installs into ${TCFUZZ_CACHE}/python/<name> (default
# ~/.cache/tcfuzz), outside the repo. Uses a private apt sources list and
# state dir per suite; never edits the system's. Builds with $(nproc) jobs
# (TCFUZZ_BUILD_JOBS overrides): about 5 minutes per interpreter on 2 cores.
# Dynamo needs 3.13.3 or later on 3.13t.
set -euo pipefail

NAME=${1:?usage: build-python.sh 3.13t|3.14|3.14t|3.15|3.15t}
MINOR=${NAME%t}
FREE_THREADED=0; [ "$NAME" != "$MINOR" ] && FREE_THREADED=1
case $MINOR in
  3.13) SUITE=trixie ;;
  3.14|3.15) SUITE=sid ;;
  *) printf '[%s] error: no Debian source package is known for CPython %s: install it with uv python install %s\n' "$NAME" "$MINOR" "$NAME" >&2; exit 2 ;;
esac
SUITE=${TCFUZZ_DEBIAN_SUITE:-$SUITE}
CACHE=${TCFUZZ_CACHE:-$HOME/.cache/tcfuzz}
PREFIX=$CACHE/python/$NAME
WORK=$CACHE/build/python$NAME
SOURCES=$CACHE/build/src-python$MINOR
APT=$CACHE/apt-$SUITE
MIRROR=${TCFUZZ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
JOBS=${TCFUZZ_BUILD_JOBS:-$(nproc)}
EXE=$PREFIX/bin/python$NAME

step() { printf '[%s] %s\n' "$NAME" "$*" >&2; }
fail() { printf '[%s] error: %s\n' "$NAME" "$*" >&2; exit 1; }

# The check a finished build must pass: it runs, has the modules tox, uv and
# torch need, keeps site-packages under its prefix, and has the GIL it should.
CHECK="import sys, ssl, sqlite3, ctypes, site, sysconfig
assert site.getsitepackages()[0].startswith(sys.prefix)
assert bool(sysconfig.get_config_var('Py_GIL_DISABLED')) == bool($FREE_THREADED)
print(sys.version)"
if [ -x "$EXE" ] && "$EXE" -c "$CHECK" >/dev/null 2>&1; then
  step "already built: $EXE"
  exit 0
fi

if ! dpkg -s libgdbm-dev >/dev/null 2>&1; then
  step "installing build dependency libgdbm-dev"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  { $SUDO apt-get install -y -q libgdbm-dev >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q libgdbm-dev >/dev/null; }; } \
    || fail "cannot install libgdbm-dev: run (sudo) apt-get install libgdbm-dev, then rerun"
fi

mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/etc/preferences.d" "$WORK" "$SOURCES"
printf 'deb-src [trusted=yes] %s %s main\n' "$MIRROR" "$SUITE" >"$APT/etc/sources.list"
APTOPTS=(-o "Dir::Etc::SourceList=$APT/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
         -o "Dir::Etc::Preferences=/nonexistent" -o "Dir::Etc::PreferencesParts=$APT/etc/preferences.d"
         -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
         -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")

# Build pristine CPython from the package's upstream tarball (*.orig.tar.xz):
# Debian's patches relocate site-packages and disable ensurepip, which breaks
# virtual environments made from a --prefix install. The 3.X and 3.Xt builds
# share one download.
# The tarball, never its detached signature (*.orig.tar.xz.asc, shipped beside it since
# trixie's 3.13.5-2+deb13u5; measured: sort -V put the .asc last and tar refused it).
pick_orig() { ls "$SOURCES"/python"$MINOR"_"$MINOR".*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | sort -V | tail -n1 || true; }
ORIG=$(pick_orig)
if [ -z "$ORIG" ] && [ "$MINOR" = 3.13 ]; then
  # Where an older version of this script left trixie's tarball.
  ORIG=$(ls "$CACHE"/build/python3.13t/python3.13_3.13.*.orig.tar.xz 2>/dev/null | head -n1 || true)
fi
if [ -z "$ORIG" ]; then
  step "fetching the $SUITE source package index ($MIRROR)"
  apt-get "${APTOPTS[@]}" -q update >"$WORK/apt-update.log" 2>&1 || fail "apt-get update failed, see $WORK/apt-update.log"
  step "downloading the python$MINOR source package"
  (cd "$SOURCES" && apt-get "${APTOPTS[@]}" -q source --download-only "python$MINOR" >"$WORK/apt-source.log" 2>&1) \
    || fail "apt-get source python$MINOR failed (is it in Debian $SUITE?), see $WORK/apt-source.log"
  ORIG=$(pick_orig)
  [ -n "$ORIG" ] || fail "the python$MINOR source package has no upstream tarball, see $WORK/apt-source.log"
fi
SRC=$WORK/upstream
if [ ! -x "$SRC/configure" ]; then
  step "unpacking $(basename "$ORIG")"
  rm -rf "$SRC"; mkdir -p "$SRC"
  tar -xf "$ORIG" -C "$SRC" --strip-components=1 || fail "cannot unpack $ORIG"
fi
step "source: $SRC"

FLAGS=(--prefix="$PREFIX" --with-ensurepip=install)
[ "$FREE_THREADED" = 1 ] && FLAGS+=(--disable-gil)
BUILD=$WORK/build-upstream
mkdir -p "$BUILD"
cd "$BUILD"
# Stamps make an interrupted run resume at the step that failed.
if [ ! -f .configured ]; then
  step "configure ${FLAGS[*]:1} (about 30 s)"
  "$SRC/configure" "${FLAGS[@]}" >"$WORK/configure.log" 2>&1 || fail "configure failed, see $WORK/configure.log"
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
if [ ! -x "$EXE" ]; then
  # A GIL build installs python3.X; give it the name tox-uv looks for too.
  [ -x "$PREFIX/bin/python$MINOR" ] && ln -sfn "python$MINOR" "$EXE"
fi
"$EXE" -c "$CHECK" >&2 || fail "the built interpreter does not run, lacks ssl/sqlite3/ctypes, or has the wrong GIL setting"
step "done: $EXE"
