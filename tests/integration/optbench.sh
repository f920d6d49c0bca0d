#!/bin/sh
# The optimizer benchmark in a tiny mode: one cell, one seed, five trials, Optuna included
# when Debian's python3-optuna is there. Checks the JSON parses and holds every optimizer,
# that curves are best-so-far, that `--eval sim-trial` (the real subcommand) gives the same
# measurements as the in-process simulator, and that a missing Optuna is a skip, not a crash.
set -eu
: "${TUNEDECK_BUILD:?set TUNEDECK_BUILD to the build folder}"
: "${TUNEDECK_BIN:=$TUNEDECK_BUILD/tunedeck}"
export TUNEDECK_BIN
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' HUP INT TERM # ends the run; the EXIT trap cleans up
fail() { echo "optbench: $*" >&2; exit 1; }

# `make test` does not build benchmarks; build this one (objects are already there).
make -s -C "$root" BUILD="$TUNEDECK_BUILD" "$TUNEDECK_BUILD/bench/optimizer" >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log" >&2; fail "could not build bench/optimizer"; }
bench="$TUNEDECK_BUILD/bench/optimizer"
py=/usr/bin/python3
[ -x "$py" ] || fail "$py is needed to read the JSON"
has_optuna=0
"$py" -c 'import optuna' 2>/dev/null && has_optuna=1

tiny="--cells B:googlenet --seeds 1 --trials 5"
# shellcheck disable=SC2086
"$bench" $tiny --out "$tmp/inproc.json" >"$tmp/inproc.txt" 2>"$tmp/inproc.err" ||
    { cat "$tmp/inproc.err" >&2; fail "tiny run failed"; }
grep -q "B:googlenet  best-known" "$tmp/inproc.txt" || fail "no table printed"

# Every registered optimizer, as `tunedeck tune --help` lists them, must be in the results.
registered="$("$TUNEDECK_BIN" tune --help | sed -n 's/^ *--optimizer NAME *\([^(]*\).*/\1/p' |
    tr -d ' ')"
[ -n "$registered" ] || fail "could not read the registered optimizers from tune --help"

"$py" - "$tmp/inproc.json" "$registered" "$has_optuna" <<'EOF' || fail "inproc JSON check failed"
import json, math, sys
doc = json.load(open(sys.argv[1]))
registered = [n for n in sys.argv[2].split(",") if n]
has_optuna = sys.argv[3] == "1"
names = doc["optimizers"]
for n in registered + ["optuna-tpe", "optuna-cmaes"]:
    assert n in names, "optimizer %s missing from %s" % (n, names)
cell = doc["cells"][0]
assert cell["spec"] == "B:googlenet" and cell["best_known_s"] > 0
by = {r["optimizer"]: r for r in cell["results"]}
assert set(by) == set(names), "results %s != optimizers %s" % (sorted(by), sorted(names))
skipped = {s["name"] for s in doc["skipped"]}
for n in registered:
    assert by[n]["ran"], "%s did not run" % n
if has_optuna:
    assert by["optuna-tpe"]["ran"], "optuna is installed but optuna-tpe did not run"
for n, r in by.items():
    if not r["ran"]:
        assert n in skipped or r["runs"][0].get("error"), "%s neither ran nor says why" % n
        continue
    run = r["runs"][0]
    curve = [math.inf if v is None else v for v in run["best_ratio"]]
    assert len(curve) == 5
    assert all(b <= a for a, b in zip(curve, curve[1:])), "%s: not best-so-far: %s" % (n, curve)
    assert all(v >= 0.9 for v in curve), "%s beats best-known by >10%%: %s" % (n, curve)
    assert len(run["observed_s"]) == 5 and all(v is None or v > 0 for v in run["observed_s"])
    assert "5" in r["median_ratio_at"]
EOF

# The real `tunedeck sim-trial` answers with exactly the same measurements.
peers="random"
# The structured optimizer also reads the part measurements: they must survive the protocol.
case ",$registered," in *,bespoke,*) peers="$peers,bespoke" ;; esac
[ "$has_optuna" = 1 ] && peers="$peers,optuna-tpe,generic-gp-ei"
# shellcheck disable=SC2086
"$bench" $tiny --optimizers "$peers" --eval sim-trial --out "$tmp/simtrial.json" \
    >"$tmp/simtrial.txt" 2>"$tmp/simtrial.err" ||
    { cat "$tmp/simtrial.err" >&2; fail "sim-trial run failed"; }
"$py" - "$tmp/inproc.json" "$tmp/simtrial.json" <<'EOF' || fail "sim-trial and in-process differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["eval"] == "sim-trial"
ra = {r["optimizer"]: r for r in a["cells"][0]["results"]}
compared = 0
for r in b["cells"][0]["results"]:
    assert r["ran"], "%s did not run through sim-trial: %s" % (r["optimizer"], r["runs"])
    if r["optimizer"] not in ra:  # generic-gp-ei is opt-in: it runs here only
        assert all(v is not None for v in r["runs"][0]["observed_s"])
        continue
    x, y = ra[r["optimizer"]]["runs"][0], r["runs"][0]
    assert x["observed_s"] == y["observed_s"], (r["optimizer"], x["observed_s"], y["observed_s"])
    compared += 1
assert compared >= 1
EOF

# Pruning (issue 14): random search does not read outcomes, so with and without pruning it
# runs the same schedules and finds the same best; pruned trials cost less, never more.
# shellcheck disable=SC2086
"$bench" --cells B:googlenet --seeds 1 --trials 8 --optimizers random,random-no-prune,bespoke \
    --no-peers --out "$tmp/cost.json" >"$tmp/cost.txt" 2>"$tmp/cost.err" ||
    { cat "$tmp/cost.err" >&2; fail "cost run failed"; }
grep -q "tuning cost" "$tmp/cost.txt" || fail "no cost table printed"
"$py" - "$tmp/cost.json" <<'EOF2' || fail "cost JSON check failed"
import json, sys
doc = json.load(open(sys.argv[1]))
cost = {r["optimizer"]: r for r in doc["cost"]["cells"][0]["results"]}
res = {r["optimizer"]: r["runs"][0] for r in doc["cells"][0]["results"]}
p, n = cost["random"], cost["random-no-prune"]
# trial 1 is a probe, never the best; from then on pruning drops no best
bp, bn = res["random"]["best_ratio"], res["random-no-prune"]["best_ratio"]
assert bp[0] is None and bp[-1] == bn[-1], (bp, bn)
assert all(a is None or a >= b for a, b in zip(bp, bn)), (bp, bn)
assert n["pruned_trials"] == 0, n
assert p["pruned_trials"] > 0, "random search on B:googlenet runs hopeless schedules: %s" % p
assert p["cost_budget_x_ideal"] < n["cost_budget_x_ideal"], (p, n)
for r in cost.values():
    assert r["cost_budget_x_ideal"] >= 0.9, r  # nothing runs much below best-known
b = cost["bespoke"]
assert b["cost_to_within_x_ideal"] is not None and b["cost_to_within_s"] > 0, b
EOF2

# No Optuna (a Python that does not exist): the peers are skipped with a reason.
# shellcheck disable=SC2086
"$bench" $tiny --optimizers random,optuna-tpe --python "$tmp/no-python" --out "$tmp/skip.json" \
    >"$tmp/skip.txt" 2>&1 || fail "a missing Python made the benchmark fail"
grep -q "optuna-tpe *skipped:" "$tmp/skip.txt" || fail "optuna-tpe not reported as skipped"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [s["name"] for s in d["skipped"]] == ["optuna-tpe"], d["skipped"]' "$tmp/skip.json" ||
    fail "skip not in the JSON"

# Bad input: a clear error naming the flag, non-zero exit.
if "$bench" --cells Q:googlenet >"$tmp/bad.txt" 2>&1; then fail "bad --cells accepted"; fi
grep -q -- "--cells" "$tmp/bad.txt" || fail "bad --cells message does not name the flag"
if "$bench" --optimizers nosuch >"$tmp/bad.txt" 2>&1; then fail "bad --optimizers accepted"; fi
grep -q "unknown optimizer 'nosuch'" "$tmp/bad.txt" || fail "bad --optimizers message unclear"
# An --out that cannot be written is said before the run (it once came after the whole run):
# at once, exit 2, no table; an existing file it would overwrite is not touched by the check.
for out in "$tmp/no-such-dir/r.json" "$tmp"; do
    rc=0; "$bench" --out "$out" >"$tmp/bad.txt" 2>"$tmp/bad.err" || rc=$?
    [ "$rc" = 2 ] || fail "unwritable --out $out: exit $rc, expected 2"
    grep -q -- "--out $out: cannot write: " "$tmp/bad.err" || fail "--out $out: $(cat "$tmp/bad.err")"
    [ -s "$tmp/bad.txt" ] && fail "--out $out: the benchmark ran before it was refused"
done

# The allreduce benchmark (issue 13) in a tiny mode: every contender ran on a mixed-GPU
# cell (Optuna when it is installed), and a PS setting is refused with the flag named.
make -s -C "$root" BUILD="$TUNEDECK_BUILD" "$TUNEDECK_BUILD/bench/optimizer_allreduce" \
    >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "could not build optimizer_allreduce"; }
ar="$TUNEDECK_BUILD/bench/optimizer_allreduce"
"$ar" --cells M3:googlenet:4096 --seeds 1 --trials 10 --out "$tmp/ar.json" >"$tmp/ar.txt" 2>&1 ||
    { cat "$tmp/ar.txt" >&2; fail "tiny allreduce run failed"; }
"$py" - "$tmp/ar.json" "$has_optuna" <<'EOF' || fail "allreduce JSON check failed"
import json, sys
doc = json.load(open(sys.argv[1]))
cell = doc["cells"][0]
assert cell["cell"] == "M3:googlenet:4096" and cell["best_known_s"] > 0
names = ["bespoke", "uniform-split", "gp", "random"] + (["optuna-tpe"] if sys.argv[2] == "1" else [])
for n in names:
    v = cell.get(n + "_at10")
    assert v is not None and v >= 0.99, "%s: %s" % (n, v)
assert cell["bespoke_at10"] <= cell["uniform-split_at10"]
# The best even split over a subset of machines: no faster than best-known, no slower than
# the even split over them all (one of the subsets), and named by its machines.
assert 0.999 <= cell["corner_ratio"] <= cell["uniform-split_at10"] + 1e-9, cell["corner_ratio"]
assert all(m.startswith(("a100-", "t4-")) for m in cell["corner"].split("+")), cell["corner"]
EOF
if "$ar" --cells B:googlenet >"$tmp/bad.txt" 2>&1; then fail "a PS cell accepted"; fi
grep -q -- "--cells 'B:googlenet': not an allreduce setting" "$tmp/bad.txt" ||
    fail "PS cell message unclear: $(cat "$tmp/bad.txt")"
rc=0; "$ar" --out "$tmp/no-such-dir/r.json" >"$tmp/bad.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q -- "--out $tmp/no-such-dir/r.json: cannot write" "$tmp/bad.txt" ||
    fail "allreduce: unwritable --out: exit $rc: $(cat "$tmp/bad.txt")"

# The stop rule benchmark in a tiny mode: every registered rule judged on the same sessions,
# its stop no later than the budget and its ratio the session's at that trial; bad flags named.
make -s -C "$root" BUILD="$TUNEDECK_BUILD" "$TUNEDECK_BUILD/bench/stoprule" >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log" >&2; fail "could not build bench/stoprule"; }
sr="$TUNEDECK_BUILD/bench/stoprule"
"$sr" --cells B:alexnet,M3:googlenet:4096 --seeds 1 --budget 12 --out "$tmp/sr.json" \
    >"$tmp/sr.txt" 2>&1 || { cat "$tmp/sr.txt" >&2; fail "tiny stoprule run failed"; }
grep -q "ei-streak (baseline)" "$tmp/sr.txt" || fail "stoprule: no baseline rule: $(head -3 "$tmp/sr.txt")"
"$py" - "$tmp/sr.json" <<'EOF' || fail "stoprule JSON check failed"
import json, sys
doc = json.load(open(sys.argv[1]))
names = [r["name"] for r in doc["rules"]]
assert "ei-streak" in names and "regret-bound" in names, names
assert [c["cell"] for c in doc["cells"]] == ["B:alexnet", "M3:googlenet:4096"]
for c in doc["cells"]:
    s = c["sessions"][0]
    assert len(s["trials"]) == 12
    for n in names:
        o = s["stops"][n]
        assert 1 <= o["stop"] <= 12 and o["ratio"] == s["trials"][o["stop"] - 1]["ratio"], (n, o)
# allreduce suggestions carry no EI: the EI streak cannot stop them
assert doc["cells"][1]["sessions"][0]["stops"]["ei-streak"]["stop"] == 12
EOF
rc=0; "$sr" --seeds 0 >"$tmp/bad.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q -- "--seeds: expected 1..50, found '0'" "$tmp/bad.txt" ||
    fail "stoprule --seeds 0: exit $rc: $(cat "$tmp/bad.txt")"

# The frame benchmarks answer --help with their usage and run nothing (they once ran whole).
make -s -C "$root" BUILD="$TUNEDECK_BUILD" "$TUNEDECK_BUILD/bench/console" \
    "$TUNEDECK_BUILD/bench/slurm_frame" >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log" >&2; fail "could not build the frame benchmarks"; }
for fb in console slurm_frame; do
    rc=0; "$TUNEDECK_BUILD/bench/$fb" --help >"$tmp/help.txt" 2>&1 || rc=$?
    [ "$rc" = 0 ] && [ "$(cat "$tmp/help.txt")" = "usage: $fb [--out FILE.json]" ] ||
        fail "$fb --help: exit $rc: $(head -3 "$tmp/help.txt")"
done
exit 0
