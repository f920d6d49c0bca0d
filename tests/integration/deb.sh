#!/bin/sh
# make deb: a package built with Debian's tools from the existing build, whose Depends names
# the package of every shared library the programs link (ncurses, libssh, GSL, OpenBLAS,
# cJSON), that lintian passes without errors, that dpkg installs into and removes from a
# scratch root, and whose files run from a folder outside the source tree
# (tests/integration/lib/installed.sh).
set -u
bin="${TUNEDECK_BIN:?TUNEDECK_BIN names the built tunedeck}"
build="${TUNEDECK_BUILD:-$(dirname "$bin")}"
suite=deb
. "$(dirname "$0")/lib/make_suite.sh"

make -s -C "$root" BUILD="$build" deb DEBDIR="$tmp/out" >"$tmp/make.out" 2>&1 ||
    { fail "make deb: $(tail -5 "$tmp/make.out")"; exit 1; }
deb="$(tail -1 "$tmp/make.out")"
[ -f "$deb" ] || { fail "make deb named no package: $(cat "$tmp/make.out")"; exit 1; }
case "$deb" in "$tmp/out/"*) ;; *) fail "the package is not in DEBDIR: $deb" ;; esac

# The control file: name, the version tunedeck reports, the runtime libraries' packages.
[ "$(dpkg-deb -f "$deb" Package)" = tunedeck ] || fail "Package: $(dpkg-deb -f "$deb" Package)"
[ "tunedeck $(dpkg-deb -f "$deb" Version)" = "$("$bin" --version)" ] ||
    fail "Version $(dpkg-deb -f "$deb" Version) is not what $("$bin" --version) says"
depends="$(dpkg-deb -f "$deb" Depends)"
# (dpkg-shlibdeps names the library packages; OpenBLAS's is the libopenblas0 metapackage
# over the pthread/openmp/serial builds, so the check is on the names, then on this
# machine having each one.)
for lib in ncursesw tinfo ssh gsl openblas cjson; do
    ldd "$bin" | grep -q "lib$lib[.]so" || fail "$bin links no lib$lib"
    echo "$depends" | tr ',' '\n' | grep -Eq "^ *lib$lib-?[0-9]+( |\$)" ||
        fail "Depends names no lib$lib package: $depends"
done
for pkg in $(echo "$depends" | tr ',' '\n' | sed 's/^ *//; s/[ |(].*//'); do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
        fail "Depends names $pkg, which this machine (where it was built) lacks"
done

# lintian, Debian's package checker: no errors.
if command -v lintian >/dev/null; then
    lintian --fail-on error "$deb" >"$tmp/lintian.out" 2>&1 ||
        fail "lintian: $(grep '^E:' "$tmp/lintian.out" | head -5)"
fi

# dpkg installs it into a scratch root (its own package database) and removes it again.
scratch="$tmp/root"
mkdir -p "$scratch/var/lib/dpkg/info" "$scratch/var/lib/dpkg/updates"
touch "$scratch/var/lib/dpkg/status"
dpk() { dpkg --root="$scratch" --log=/dev/null --force-not-root --force-depends "$@"; }
dpk -i "$deb" >"$tmp/dpkg.out" 2>&1 || fail "dpkg -i into a scratch root: $(tail -3 "$tmp/dpkg.out")"
[ -x "$scratch/usr/bin/tunedeck" ] || fail "dpkg -i left no /usr/bin/tunedeck"
dpk -s tunedeck 2>/dev/null | grep -q "^Status: install ok installed" || fail "dpkg -s: not installed"
sh "$root/tests/integration/lib/installed.sh" "$scratch/usr" || fails=$((fails + 1))
dpk -r tunedeck >"$tmp/dpkg.out" 2>&1 || fail "dpkg -r: $(tail -3 "$tmp/dpkg.out")"
left="$(find "$scratch/usr" ! -type d 2>/dev/null | head -5)"
[ -z "$left" ] || fail "dpkg -r left: $left"

[ $fails -eq 0 ]
