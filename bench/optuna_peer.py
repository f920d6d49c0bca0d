#!/usr/bin/python3
"""Optuna as a generic peer for bench/optimizer: an ask/tell loop over JSON lines.

The benchmark (C) owns the simulator, the decoding of the flat vector into a schedule
(core/flatsched.c) and the bookkeeping; this script only runs Optuna's samplers.

Lines in (stdin) and out (stdout), one JSON object each:
  start                -> {"ready": true, "optuna": VERSION, "samplers": {...}}  or {"error": ...}
  {"op": "new", "sampler": "tpe"|"cmaes", "seed": S, "roles": M, "weights": D}
                       -> {"ok": true} or {"error": ...}
  {"op": "ask"}        -> {"roles": [M ints in 0..3], "weights": [D floats in 0..1]}
  {"op": "tell", "value": SECONDS}  -> {"ok": true}
  {"op": "quit"} or end of input    -> exits

Search space (what a generic optimizer sees): per machine a role in {none, worker, ps, both}
(categorical for TPE; an integer 0..3 for CMA-ES, which has no categorical support); per
device a share weight in [0, 1].
"""
import json
import sys
import warnings


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    try:
        import optuna
    except Exception as e:  # the peer is skipped, not a crash
        reply({"error": "python3 cannot import optuna: %s" % e})
        return 0
    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    samplers = {"tpe": "ok"}
    try:
        import cmaes  # noqa: F401  (CmaEsSampler's dependency)
        samplers["cmaes"] = "ok"
    except Exception as e:
        samplers["cmaes"] = "python3 cannot import cmaes: %s" % e
    reply({"ready": True, "optuna": optuna.__version__, "samplers": samplers})

    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    study, space, n_roles, n_weights, trial = None, None, 0, 0, None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            reply({"error": "expected a JSON object, found: %s" % line[:80]})
            continue
        op = msg.get("op")
        if op == "quit":
            break
        if op == "new":
            name = msg.get("sampler")
            if samplers.get(name) != "ok":
                reply({"error": "sampler %s: %s" % (name, samplers.get(name, "unknown"))})
                continue
            seed = int(msg["seed"])
            n_roles, n_weights = int(msg["roles"]), int(msg["weights"])
            if name == "tpe":
                sampler = optuna.samplers.TPESampler(seed=seed)
                role = CategoricalDistribution([0, 1, 2, 3])
            else:
                sampler = optuna.samplers.CmaEsSampler(seed=seed)
                role = IntDistribution(0, 3)
            space = {}
            for m in range(n_roles):
                space["role_%d" % m] = role
            for d in range(n_weights):
                space["share_%d" % d] = FloatDistribution(0.0, 1.0)
            study = optuna.create_study(direction="minimize", sampler=sampler)
            trial = None
            reply({"ok": True})
        elif op == "ask":
            if study is None:
                reply({"error": "ask before new"})
                continue
            trial = study.ask(space)
            p = trial.params
            reply({"roles": [int(p["role_%d" % m]) for m in range(n_roles)],
                   "weights": [float(p["share_%d" % d]) for d in range(n_weights)]})
        elif op == "tell":
            if trial is None:
                reply({"error": "tell before ask"})
                continue
            study.tell(trial, float(msg["value"]))
            trial = None
            reply({"ok": True})
        else:
            reply({"error": "unknown op %r" % op})
    return 0


if __name__ == "__main__":
    sys.exit(main())
