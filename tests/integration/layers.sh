#!/bin/sh
# The include graph between folders only points down (docs/architecture.md), and no two
# files include each other through a cycle. Every #include "x/y.h" is root-relative, so the
# folder of each side is its path minus the file name. And JSON tunedeck prints goes through
# core/base/jsonprint.
set -eu
cd "$(dirname "$0")/../.."

# Rank of each folder: a file may include its own folder or any folder of lower rank.
# Folders on one rank are siblings and must not include each other. A folder missing
# from this table fails the check, so a new folder is placed here and in the map at once.
rank() {
    case "$1" in
        core/base) echo 0 ;;
        core/model) echo 1 ;;
        core/opt|core/sched|core/sim) echo 2 ;;
        core/journal) echo 3 ;;
        remote/ssh|tools/worker) echo 4 ;;
        remote/gpu|remote/launch|remote/slurm) echo 5 ;;
        remote/live|remote/session) echo 6 ;;
        tui) echo 7 ;;
        cmd|tools|bench/args|bench/optbench|bench/frame) echo 8 ;;
        bench) echo 9 ;;
        *) echo "" ;;
    esac
}

edges="$(mktemp)"
trap 'rm -f "$edges"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
find core remote tui cmd tools bench -name '*.[ch]' | sort | while read -r file; do
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file" | while read -r inc; do
        echo "$file $inc"
    done
done > "$edges"

bad=0
# Every folder of C files has a place, even one that includes nothing outside itself, and
# every place is in the map's table.
for dir in $(find core remote tui cmd tools bench -name '*.[ch]' -exec dirname {} \; | sort -u); do
    if [ -z "$(rank "$dir")" ]; then
        echo "layers: folder $dir has no place in the layer table" >&2
        bad=1
    fi
    if ! grep -q "^| [0-9]* | .*\`$dir\`" docs/architecture.md; then
        echo "layers: folder $dir is not in docs/architecture.md's layer table" >&2
        bad=1
    fi
done
while read -r file inc; do
    from="$(dirname "$file")"
    to="$(dirname "$inc")"
    [ "$from" = "$to" ] && continue
    rf="$(rank "$from")"
    rt="$(rank "$to")"
    if [ -z "$rf" ] || [ -z "$rt" ]; then
        echo "layers: $file includes $inc: folder ${from} or ${to} has no place in the layer table" >&2
        bad=1
    elif [ "$rt" -ge "$rf" ]; then
        echo "layers: $file includes $inc: $from (layer $rf) must not include $to (layer $rt)" >&2
        bad=1
    fi
done < "$edges"

# Cycles between modules: a module is a .c with its header and its _priv.h (the header its
# own files share), and a header with no .c is a module of its own. tsort reports any loop,
# such as a view calling back into the loop file that includes it.
units="$(mktemp)"
trap 'rm -f "$edges" "$units"' EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
sed 's/\.[ch] / /; s/\.h$//; s/_priv / /; s/_priv$//' "$edges" | awk '$1 != $2' > "$units"
if ! tsort "$units" > /dev/null 2> "$units.err"; then
    echo "layers: include cycle between modules:" >&2
    grep -v 'input contains a loop' "$units.err" >&2
    bad=1
fi
rm -f "$units.err"

# JSON that tunedeck prints goes through core/base/jsonprint (C1 and bidirectional controls
# escaped for the terminal): cJSON's printers are called there alone, and by the files whose
# JSON tunedeck only reads back or feeds a trial (the settings file, a trial's schedule on
# its stdin).
for file in $(grep -rl 'cJSON_Print' core remote tui cmd tools bench --include='*.c'); do
    case "$file" in
        core/base/jsonprint.c|tui/config.c|core/model/schedule.c) ;;
        *) echo "layers: $file prints JSON with cJSON_Print*: use jsonprint_text (core/base/jsonprint.h)" >&2
           bad=1 ;;
    esac
done

[ "$bad" -eq 0 ] || exit 1
echo "layers: $(wc -l < "$edges") includes point down, no cycles"
