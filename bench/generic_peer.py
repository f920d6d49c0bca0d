#!/usr/bin/python3
"""Generic black-box optimizers as peers for bench/optimizer: an ask/tell loop over JSON lines.

Samplers: Optuna's TPE and CMA-ES (Debian's python3-optuna, python3-cmaes), and a
Spearmint-like GP-EI written here on numpy (Snoek et al. 2012: Matern 5/2 ARD, hyperparameters
integrated out by slice sampling, EI averaged over the samples). The benchmark (C) owns the
simulator, the decoding of the flat vector into a schedule (core/opt/flatsched.c) and the
bookkeeping; this script only proposes points.

Lines in (stdin) and out (stdout), one JSON object each:
  start                -> {"ready": true, "optuna": VERSION, "samplers": {...}}  or {"error": ...}
  {"op": "new", "sampler": "tpe"|"cmaes"|"gp-ei"|"tpe-median", "seed": S, "roles": M,
   "weights": D}       -> {"ok": true, "pruner": BOOL} or {"error": ...}
  {"op": "ask"}        -> {"roles": [M ints in 0..3], "weights": [D floats in 0..1]}
  {"op": "report", "step": N, "value": SECONDS}  -> {"prune": BOOL}  (an iteration's time;
                       tpe-median only: Optuna's MedianPruner decides)
  {"op": "tell", "value": SECONDS, "pruned": BOOL}  -> {"ok": true}
  {"op": "quit"} or end of input    -> exits

Search space (what a generic optimizer sees): per machine a role in {none, worker, ps, both}
(categorical for TPE; an integer 0..3 for CMA-ES, which has no categorical support; two
0/1 bits, worker and ps, thresholded at 0.5 for GP-EI as Spearmint would see them); per device
a share weight in [0, 1].
"""
import json
import math
import sys
import os
import warnings

DEBUG = os.environ.get("PEER_DEBUG") == "1"


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class OptunaPeer:
    """TPE or CMA-ES through Optuna's ask/tell interface, with default settings."""

    def __init__(self, optuna, name, seed, n_roles, n_weights):
        pruner = None
        if name == "tpe-median":
            # Optuna's default MedianPruner: past 5 trials, a trial whose intermediate value is
            # worse than the median of earlier trials at the same step is stopped.
            name, pruner = "tpe", optuna.pruners.MedianPruner()
        from optuna.distributions import (CategoricalDistribution, FloatDistribution,
                                          IntDistribution)
        if name == "tpe":
            sampler = optuna.samplers.TPESampler(seed=seed)
            role = CategoricalDistribution([0, 1, 2, 3])
        else:
            sampler = optuna.samplers.CmaEsSampler(seed=seed)
            role = IntDistribution(0, 3)
        self.n_roles, self.n_weights = n_roles, n_weights
        self.space = {"role_%d" % m: role for m in range(n_roles)}
        for d in range(n_weights):
            self.space["share_%d" % d] = FloatDistribution(0.0, 1.0)
        self.has_pruner = pruner is not None
        self.study = optuna.create_study(direction="minimize", sampler=sampler,
                                         pruner=pruner or optuna.pruners.NopPruner())
        self.trial = None

    def ask(self):
        self.trial = self.study.ask(self.space)
        p = self.trial.params
        return ([int(p["role_%d" % m]) for m in range(self.n_roles)],
                [float(p["share_%d" % d]) for d in range(self.n_weights)])

    def report(self, step, value):
        self.trial.report(value, step)
        return self.has_pruner and self.trial.should_prune()

    def tell(self, value, pruned=False):
        if pruned:
            from optuna.trial import TrialState
            self.study.tell(self.trial, state=TrialState.PRUNED)
        else:
            self.study.tell(self.trial, value)
        self.trial = None


class GpEiPeer:
    """Spearmint-like GP-EI over the unit box [worker bits, ps bits, shares].

    Matern 5/2 ARD kernel on standardized outputs; lengthscales, amplitude and noise are
    integrated out by slice sampling (Neal 2003), continuing one chain across suggestions as
    Spearmint does; EI is averaged over the samples and maximized by random sampling plus
    local search from the best candidates."""

    N_INIT, N_SAMPLES, N_RANDOM, N_LOCAL = 5, 3, 2000, 3

    def __init__(self, np, seed, n_roles, n_weights):
        self.np = np
        self.rng = np.random.default_rng(seed)
        self.M, self.D = n_roles, n_weights
        self.dim = 2 * n_roles + n_weights
        # theta = [log lengthscales..., log amplitude, log noise]
        self.theta = np.concatenate([np.zeros(self.dim), [0.0, -4.0]])
        self.burned = False
        self.X, self.y, self.pending = [], [], None

    # -- the model --
    def kernel(self, A, B, ls, amp):
        np = self.np
        d = (A[:, None, :] - B[None, :, :]) / ls
        r = np.sqrt(np.maximum((d * d).sum(-1), 0.0))
        s5 = math.sqrt(5.0) * r
        return amp * (1.0 + s5 + 5.0 / 3.0 * r * r) * np.exp(-s5)

    def matern(self, r2, amp):
        np = self.np
        r = np.sqrt(np.maximum(r2, 0.0))
        s5 = math.sqrt(5.0) * r
        return amp * (1.0 + s5 + 5.0 / 3.0 * r2) * np.exp(-s5)

    def log_post(self, theta, D2, y):
        """Log posterior of the hyperparameters; D2[i, j, k] = (x_ik - x_jk)^2."""
        np = self.np
        log_ls, log_amp, log_noise = theta[:-2], theta[-2], theta[-1]
        if np.any(log_ls < math.log(0.01)) or np.any(log_ls > math.log(10.0)):
            return -math.inf
        if not -14.0 < log_noise < 1.0:
            return -math.inf
        K = self.matern(D2 @ np.exp(-2.0 * log_ls), math.exp(log_amp))
        K[np.diag_indices_from(K)] += math.exp(log_noise) + 1e-8
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            return -math.inf
        a = np.linalg.solve(L, y)
        return (-0.5 * a @ a - np.log(np.diag(L)).sum() - 0.5 * log_amp * log_amp)

    def slice_sweep(self, D2, y):
        """One sweep of coordinate-wise slice sampling with stepping out."""
        theta = self.theta.copy()
        cur = self.log_post(theta, D2, y)
        for i in self.rng.permutation(len(theta)):
            level = cur + math.log(self.rng.uniform())
            w = 1.0
            lo = theta[i] - w * self.rng.uniform()
            hi = lo + w
            for _ in range(8):
                t = theta.copy(); t[i] = lo
                if self.log_post(t, D2, y) <= level:
                    break
                lo -= w
            for _ in range(8):
                t = theta.copy(); t[i] = hi
                if self.log_post(t, D2, y) <= level:
                    break
                hi += w
            for _ in range(30):
                t = theta.copy(); t[i] = self.rng.uniform(lo, hi)
                v = self.log_post(t, D2, y)
                if v > level:
                    theta, cur = t, v
                    break
                if t[i] < theta[i]:
                    lo = t[i]
                else:
                    hi = t[i]
        self.theta = theta
        return theta

    def posteriors(self, X, y, samples):
        np = self.np
        out = []
        for theta in samples:
            ls, amp = np.exp(theta[:-2]), math.exp(theta[-2])
            K = self.kernel(X, X, ls, amp)
            K[np.diag_indices_from(K)] += math.exp(theta[-1]) + 1e-8
            L = np.linalg.cholesky(K)
            alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
            out.append((ls, amp, L, alpha))
        return out

    def ei(self, C, X, post, best):
        np = self.np
        total = np.zeros(len(C))
        for ls, amp, L, alpha in post:
            Ks = self.kernel(C, X, ls, amp)
            mu = Ks @ alpha
            v = np.linalg.solve(L, Ks.T)
            sd = np.sqrt(np.maximum(amp - (v * v).sum(0), 1e-12))
            z = (best - mu) / sd
            cdf = 0.5 * (1.0 + self.erf(z / math.sqrt(2.0)))
            pdf = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
            total += sd * (z * cdf + pdf)
        return total / len(post)

    def erf(self, x):
        # Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf without scipy.
        np = self.np
        s = np.sign(x)
        x = np.abs(x)
        t = 1.0 / (1.0 + 0.3275911 * x)
        p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 +
                                                                           t * 1.061405429))))
        return s * (1.0 - p * np.exp(-x * x))

    # -- ask/tell --
    def decode(self, x):
        roles = [int(x[m] > 0.5) + 2 * int(x[self.M + m] > 0.5) for m in range(self.M)]
        return roles, [float(v) for v in x[2 * self.M:]]

    def ask(self):
        np = self.np
        if len(self.y) < self.N_INIT:
            x = self.rng.uniform(size=self.dim)
        else:
            X = np.array(self.X)
            y = np.array(self.y)
            y = (y - y.mean()) / (y.std() + 1e-12)
            D2 = (X[:, None, :] - X[None, :, :]) ** 2
            if not self.burned:
                for _ in range(10):
                    self.slice_sweep(D2, y)
                self.burned = True
            samples = [self.slice_sweep(D2, y) for _ in range(self.N_SAMPLES)]
            post = self.posteriors(X, y, samples)
            best = y.min()
            C = self.rng.uniform(size=(self.N_RANDOM, self.dim))
            # Around the best points seen: Spearmint's local refinement of good regions.
            for j in np.argsort(y)[:3]:
                near = X[j] + self.rng.normal(0, 0.1, size=(100, self.dim))
                C = np.vstack([C, np.clip(near, 0, 1)])
            e = self.ei(C, X, post, best)
            starts = C[np.argsort(-e)[:self.N_LOCAL]]
            best_x, best_e = C[np.argmax(e)], e.max()
            for x0 in starts:
                x, ex, step = x0, self.ei(x0[None, :], X, post, best)[0], 0.1
                for _ in range(12):
                    cand = np.clip(x + self.rng.normal(0, step, size=(32, self.dim)), 0, 1)
                    ec = self.ei(cand, X, post, best)
                    k = np.argmax(ec)
                    if ec[k] > ex:
                        x, ex = cand[k], ec[k]
                    else:
                        step *= 0.5
                if ex > best_e:
                    best_x, best_e = x, ex
            x = best_x
        self.pending = np.asarray(x, dtype=float)
        return self.decode(self.pending)

    has_pruner = False

    def tell(self, value, pruned=False):
        self.X.append(self.pending)
        self.y.append(value)
        self.pending = None


def main():
    warnings.filterwarnings("ignore")
    samplers, optuna, np, version = {}, None, None, None
    try:
        import optuna
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        version = optuna.__version__
        samplers["tpe"] = samplers["tpe-median"] = "ok"
        try:
            import cmaes  # noqa: F401  (CmaEsSampler's dependency)
            samplers["cmaes"] = "ok"
        except Exception as e:
            samplers["cmaes"] = "python3 cannot import cmaes: %s" % e
    except Exception as e:  # the peers are skipped, not a crash
        samplers["tpe"] = samplers["cmaes"] = samplers["tpe-median"] = \
            "python3 cannot import optuna: %s" % e
    try:
        import numpy as np
        samplers["gp-ei"] = "ok"
    except Exception as e:
        samplers["gp-ei"] = "python3 cannot import numpy: %s" % e
    reply({"ready": True, "optuna": version, "samplers": samplers})

    peer = None
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
            seed, m, d = int(msg["seed"]), int(msg["roles"]), int(msg["weights"])
            if name == "gp-ei":
                peer = GpEiPeer(np, seed, m, d)
            else:
                peer = OptunaPeer(optuna, name, seed, m, d)
            reply({"ok": True, "pruner": peer.has_pruner})
        elif op == "ask":
            if peer is None:
                reply({"error": "ask before new"})
                continue
            roles, weights = peer.ask()
            if DEBUG: sys.stderr.write("ask %s %s\n" % (roles, [round(w, 2) for w in weights]))
            reply({"roles": roles, "weights": weights})
        elif op == "tell":
            if peer is None:
                reply({"error": "tell before ask"})
                continue
            peer.tell(float(msg["value"]), bool(msg.get("pruned", False)))
            reply({"ok": True})
        elif op == "report":
            if peer is None or not hasattr(peer, "report") or peer.trial is None:
                reply({"error": "report outside an Optuna trial"})
                continue
            reply({"prune": bool(peer.report(int(msg["step"]), float(msg["value"])))})
        else:
            reply({"error": "unknown op %r" % op})
    return 0


if __name__ == "__main__":
    sys.exit(main())
