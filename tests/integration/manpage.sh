#!/bin/sh
# The man page (docs/man/tunedeck.1) renders with man-db without warnings and names every
# option that any command's --help prints: adding an option without documenting it fails here,
# and so does an option a command's section defines that its --help does not list.
set -u
bin="${TUNEDECK_BIN:?TUNEDECK_BIN names the built tunedeck}"
build="${TUNEDECK_BUILD:-$(dirname "$bin")}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
page="$root/docs/man/tunedeck.1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
fails=0
fail() { echo "manpage: FAIL: $*"; fails=$((fails + 1)); }

# Renders: man-db's own path (man -l), no groff warnings, the sections a reader expects.
MANWIDTH=80 man --warnings -l "$page" >"$tmp/page80.txt" 2>"$tmp/warn" || fail "man -l exited $?"
[ -s "$tmp/warn" ] && fail "man -l warnings: $(head -3 "$tmp/warn")"
for section in NAME SYNOPSIS DESCRIPTION COMMANDS FILES ENVIRONMENT "EXIT STATUS"; do
    grep -q "^$section" "$tmp/page80.txt" || fail "no $section section"
done
# At a terminal's width no option is split across lines by hyphenation ('--pol-' then
# 'icy'): a reader searching the pager for --policy would miss it there.
grep -E -- '--[a-z0-9-]*[a-z0-9](‐|-)$' "$tmp/page80.txt" >"$tmp/split"
[ -s "$tmp/split" ] && fail "options hyphenated across lines at 80 columns: $(head -3 "$tmp/split" | tr -s ' ')"

# Every --help, as a command line per row (the helpers' too).
cat >"$tmp/helps" <<HELPS
$bin --help
$bin tune --help
$bin console --help
$bin schedule --help
$bin schedule --live --help
$bin sessions --help
$bin hosts --help
$bin sim-trial --help
$build/tunedeck-worker --help
$build/tunedeck-rexec --help
HELPS
# Every command name main's --help lists must be in the helps above and in the page.
"$bin" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' >"$tmp/commands"
[ -s "$tmp/commands" ] || fail "no command list in tunedeck --help"
while read -r c; do
    grep -q "^$bin $c --help" "$tmp/helps" || fail "command '$c' has no --help check here"
done <"$tmp/commands"

# The page as plain text, wide enough that no option is cut across lines.
MANWIDTH=400 man -l "$page" 2>/dev/null | col -b >"$tmp/page.txt"
while read -r line; do
    # shellcheck disable=SC2086 # a command line, split on purpose
    $line >"$tmp/help.txt" 2>&1 || fail "'$line' exited $?"
    grep -o -- '--[a-z][a-z0-9-]*' "$tmp/help.txt" | sort -u >>"$tmp/options"
done <"$tmp/helps"
sort -u "$tmp/options" -o "$tmp/options"
[ "$(wc -l <"$tmp/options")" -ge 40 ] || fail "only $(wc -l <"$tmp/options") options found in the --help texts"

missing() { # page.txt: prints the options it does not name
    while read -r opt; do
        grep -q -- "$opt\([^a-z0-9-]\|$\)" "$1" || echo "$opt"
    done <"$tmp/options"
}
missing "$tmp/page.txt" >"$tmp/missing"
[ -s "$tmp/missing" ] && fail "options in --help but not in tunedeck(1): $(tr '\n' ' ' <"$tmp/missing")"
while read -r c; do
    grep -q "tunedeck $c" "$tmp/page.txt" || fail "command '$c' not in tunedeck(1)"
done <"$tmp/commands"

# Each command's own options are in its own section, not just somewhere on the page (the
# console's --gpus-per-node was once only in schedule's). A section runs from its heading
# to the next one; --help is every command's and said once.
section() { # HEADING: that section of page.txt
    awk -v h="$1" 'index($0, h) == 1 { on = 1; print; next }
        on && (/^   tunedeck/ || /^[A-Z]/) { exit } on' "$tmp/page.txt"
}
while IFS='|' read -r heading line; do
    section "$heading" >"$tmp/section.txt"
    [ -s "$tmp/section.txt" ] || { fail "no section '$heading' in tunedeck(1)"; continue; }
    # shellcheck disable=SC2086 # a command line, split on purpose
    $line 2>&1 | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | grep -vx -- '--help' |
        grep -vx -- '--live' >"$tmp/own"
    # A --help that failed or printed no options would pass the loop below with nothing
    # checked: every section's command has options of its own.
    [ -s "$tmp/own" ] || fail "'$line' printed no options of its own: nothing to check in '$heading'"
    while read -r opt; do
        grep -q -- "$opt\([^a-z0-9-]\|$\)" "$tmp/section.txt" ||
            fail "'$line' lists $opt, but the section '$heading' of tunedeck(1) does not"
    done <"$tmp/own"
    # And the other way: an option the section defines (a tag line, "       --opt ARG") is
    # one the command takes; a renamed or dropped option must not live on in the page.
    # --help and --version are main's, said once under the last command's "Global options".
    $line >"$tmp/help.txt" 2>&1
    grep -E '^       --[a-z]' "$tmp/section.txt" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u |
        grep -vx -e '--help' -e '--version' >"$tmp/defined"
    while read -r opt; do
        grep -q -- "$opt\([^a-z0-9-]\|$\)" "$tmp/help.txt" ||
            fail "the section '$heading' of tunedeck(1) defines $opt, but '$line' does not list it"
    done <"$tmp/defined"
done <<SECTIONS
   tunedeck [console] —|$bin console --help
   tunedeck tune —|$bin tune --help
   tunedeck schedule —|$bin schedule --help
   tunedeck schedule --live —|$bin schedule --live --help
   tunedeck hosts —|$bin hosts --help
   tunedeck sessions —|$bin sessions --help
   tunedeck sim-trial —|$bin sim-trial --help
   tunedeck-worker|$build/tunedeck-worker --help
   tunedeck-rexec|$build/tunedeck-rexec --help
SECTIONS

# The check catches a page that lost an option (so it can fail).
grep -v -- '--gpu-wait' "$tmp/page.txt" >"$tmp/doctored.txt"
missing "$tmp/doctored.txt" | grep -qx -- '--gpu-wait' || fail "the check missed a removed option"

[ $fails -eq 0 ]
