#!/bin/sh
# A build tree copied to another checkout, then that checkout moved: each time make rebuilds
# the object that holds the source folder's path (cmd/paths.o: where the binary finds data/,
# themes/ and examples/) and links, nothing else; a second make does nothing, and `make -s`
# says nothing. Regression: make rebuilt nothing, and the copy's tunedeck read the first
# checkout's data/ (the Makefile's source-dir stamp).
set -u
build="${TUNEDECK_BUILD:?TUNEDECK_BUILD names the build folder}"
suite=buildtree
. "$(dirname "$0")/lib/make_suite.sh"

# The sources and tunedeck's objects with their times (cp -p), so that no source is newer
# than its object: only the stamp, which records the first checkout, can make one stale.
tree="$(cd "$tmp" && pwd -P)/copy"
mkdir -p "$tree/build"
(cd "$root" && cp -Rp Makefile mk cmd core remote tui tools tests bench "$tree") ||
    { fail "could not copy the sources"; exit 1; }
(cd "$build" && cp -p --parents -t "$tree/build" tunedeck source-dir \
    $(find cmd core remote tui -name '*.o' -o -name '*.d')) ||
    { fail "could not copy $build (built by make all?)"; exit 1; }

# make_in DIR: tunedeck rebuilt in DIR; the objects it wrote go to $tmp/newer.
make_in() {
    touch "$tmp/before"
    make -C "$1" build/tunedeck >"$tmp/make.out" 2>&1 || fail "make in $1: $(tail -5 "$tmp/make.out")"
    (cd "$1/build" && find . -name '*.o' -newer "$tmp/before" | sort) >"$tmp/newer"
}

# moved DIR: make there rebuilds cmd/paths.o alone, links, and the binary names DIR; then
# nothing is left to do, quietly under -s.
moved() {
    make_in "$1"
    [ "$(cat "$tmp/newer")" = "./cmd/paths.o" ] ||
        fail "in $1 make rebuilt '$(cat "$tmp/newer" | tr '\n' ' ')', not ./cmd/paths.o alone: $(cat "$tmp/make.out")"
    grep -q '^  LINK  build/tunedeck$' "$tmp/make.out" || fail "in $1 no link: $(cat "$tmp/make.out")"
    "$1/build/tunedeck" --help 2>&1 | grep -qxF "data, themes, examples: $1 (TUNEDECK_HOME overrides)" ||
        fail "$1/build/tunedeck does not look in $1: $("$1/build/tunedeck" --help 2>&1 | tail -1)"
    make_in "$1"
    [ ! -s "$tmp/newer" ] && ! grep -q '^  \(CC\|LINK\) ' "$tmp/make.out" ||
        fail "a second make in $1 did something: $(cat "$tmp/make.out")"
    out="$(make -s -C "$1" build/tunedeck 2>&1)"
    [ -z "$out" ] || fail "make -s in $1 said: $out"
}

moved "$tree"
mv "$tree" "$tree-moved"
moved "$tree-moved"

[ "$fails" -eq 0 ] || exit 1
echo "buildtree: a copied and a moved build tree rebuild cmd/paths.o alone"
