/* bench/stoprule: when the stop rule (--stop-when-converged, core/opt/stoprule.h) ends a bespoke
 * session, against where the search got. Each cell and seed runs one tuning session exactly as
 * `tunedeck tune --sim CELL --seed N --budget 60` does (the tuner, the sim launcher, pruning);
 * since a stop rule only cuts a session short and never changes its suggestions, every
 * registered rule is then judged on the same trials: the trial it stops at, the best noiseless
 * time among the trials run by then as a ratio to the simulator's best-known, and the trials it
 * spent after the search first got within 1.02x of best-known; each rule against the baseline,
 * ei-streak (the rule before regret-ei, the default since this benchmark measured them). */
#include <cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/args/benchargs.h"
#include "core/base/clock.h"
#include "core/base/jsonfile.h"
#include "core/base/median.h"
#include "core/opt/stoprule.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"

/* Every parameter-server cell (bench/optimizer --cells all) and bench/optimizer_allreduce's
 * default cells. With the default 2 seeds a run takes about 2 minutes of CPU (4 s a PS
 * session, 6 s an allreduce one); --seeds 6 is docs/benchmarks.md's grid. */
#define ALL_CELLS                                                                                  \
    "A:googlenet,A:alexnet,A:speechnet,B:googlenet,B:alexnet,B:speechnet,C:googlenet,"             \
    "C:alexnet,C:speechnet,M1:resnet50,M2:resnet50,M3:googlenet:4096"
#define DEFAULT_CELLS ALL_CELLS
#define CLOSE 1.02     /* "the search is there": trials after this are what a rule could save */
#define TOO_EARLY 1.05 /* a rule must not stop before the search is within this */
enum { MAX_CELLS = 24, MAX_SEEDS = 50, MAX_BUDGET = 200, MAX_RULES = 16 };

typedef struct {
    int n; /* trials run (the budget unless the session failed) */
    StopTrial t[MAX_BUDGET];
    double ratio[MAX_BUDGET]; /* best noiseless time of the ok trials in [0, i] / best-known */
    int first_close;          /* 1-based trial where ratio first <= CLOSE; 0: never */
    double cpu_s;
} Session;

typedef struct {
    int stop;        /* trials run when it stopped (n: it never did) */
    double ratio;    /* at the stop */
    int after_close; /* stop - first_close; -1 when it stopped before getting close */
} Outcome;

typedef struct {
    char spec[64];
    double best_known_s;
    Session *s; /* [seed] */
    Outcome *o; /* [rule][seed] */
} Cell;

static int run_session(SimCluster *sim, double best_known, uint64_t seed, int budget, Session *out,
                       Error *err)
{
    TunerConfig cfg = {
        .cluster = simcluster_cluster(sim),
        .job = simcluster_job(sim),
        .optimizer = "bespoke",
        .seed = seed,
        .budget = budget,
        .launcher = launcher_find("sim"),
        .launch = {.sim = sim, .seed = seed, .timeout_s = 600},
    };
    double t0 = clock_cpu_s();
    Tuner *t = tuner_new(&cfg, err);
    if (!t)
        return -1;
    int rc = tuner_run_blocking(t, err);
    memset(out, 0, sizeof *out);
    double best = INFINITY;
    for (size_t i = 0; i < tuner_n_trials(t) && i < MAX_BUDGET; i++) {
        const TrialRecord *r = tuner_trial(t, i);
        StopTrial *st = &out->t[i];
        *st = tuner_stop_trial(r);
        if (st->ok) {
            double nl = simcluster_noiseless_time(sim, r->suggestion.schedule);
            if (nl < best)
                best = nl;
        }
        out->ratio[i] = best / best_known;
        if (!out->first_close && out->ratio[i] <= CLOSE)
            out->first_close = (int)i + 1;
        out->n = (int)i + 1;
    }
    tuner_free(t);
    out->cpu_s = clock_cpu_s() - t0;
    return rc;
}

/* Where `rule` stops the session: before the first trial k+1 it says stop for. */
static Outcome judge(const StopRule *rule, const Session *s)
{
    Outcome o = {.stop = s->n};
    char why[512];
    for (int k = 1; k < s->n; k++)
        if (rule->decide(s->t, (size_t)k, 0, why, sizeof why)) {
            o.stop = k;
            break;
        }
    o.ratio = o.stop > 0 ? s->ratio[o.stop - 1] : INFINITY;
    o.after_close = s->first_close && s->first_close <= o.stop ? o.stop - s->first_close : -1;
    return o;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: stoprule [--cells LIST] [--seeds N] [--budget N] [--out FILE]\n"
            "  --cells LIST  simulated cells, comma-separated, or 'all' (the default):\n"
            "                %s\n"
            "  --seeds N     seeds 1..N per cell (default 2)\n"
            "  --budget N    trials per session (default 60)\n"
            "  --out FILE    also write the results and every session's trials as JSON\n",
            DEFAULT_CELLS);
}

static int parse_int(const char *flag, const char *v, int lo, int hi, int *out)
{
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < lo || x > hi) {
        fprintf(stderr, "stoprule: %s: expected %d..%d, found '%s'\n", flag, lo, hi, v);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static const char *fmt_ratio(double r, char *buf, size_t cap)
{
    if (isfinite(r))
        snprintf(buf, cap, "%.3f", r);
    else
        snprintf(buf, cap, "-");
    return buf;
}

static cJSON *session_json(const Session *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < s->n; i++) {
        const StopTrial *t = &s->t[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "own", t->own);
        cJSON_AddBoolToObject(j, "ok", t->ok);
        cJSON_AddNumberToObject(j, "time_s", t->time_s);
        if (t->has_prediction) {
            cJSON_AddNumberToObject(j, "mean_s", t->mean_s);
            cJSON_AddNumberToObject(j, "p10_s", t->p10_s);
            cJSON_AddNumberToObject(j, "p90_s", t->p90_s);
        }
        if (t->has_ei)
            cJSON_AddNumberToObject(j, "ei_s", t->ei_s);
        cJSON_AddNumberToObject(j, "ratio", isfinite(s->ratio[i]) ? s->ratio[i] : -1);
        cJSON_AddItemToArray(a, j);
    }
    return a;
}

int main(int argc, char **argv)
{
    const char *cells = DEFAULT_CELLS, *out_path = NULL;
    int seeds = 2, budget = 60;
    static const struct option OPTS[] = {
        {"cells", required_argument, 0, 'c'},  {"seeds", required_argument, 0, 's'},
        {"budget", required_argument, 0, 'b'}, {"out", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", OPTS, NULL)) != -1) {
        switch (opt) {
        case 'c':
            cells = strcmp(optarg, "all") == 0 ? ALL_CELLS : optarg;
            break;
        case 's':
            if (parse_int("--seeds", optarg, 1, MAX_SEEDS, &seeds) < 0)
                return 2;
            break;
        case 'b':
            if (parse_int("--budget", optarg, 4, MAX_BUDGET, &budget) < 0)
                return 2;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (benchargs_no_operands("stoprule", argc, argv, optind, "") < 0 ||
        benchargs_out_writable("stoprule", out_path) < 0)
        return 2;
    Error err;
    size_t n_rules;
    const StopRule *const *rules = stoprule_all(&n_rules);
    const StopRule *baseline = stoprule_find("ei-streak");
    size_t ref = 0;
    for (size_t r = 0; r < n_rules; r++)
        if (rules[r] == baseline)
            ref = r;

    static Cell cellv[MAX_CELLS];
    size_t n_cells = 0;
    char list[1024];
    snprintf(list, sizeof list, "%s", cells);
    double wall0 = clock_now_s(), cpu0 = clock_cpu_s();
    printf("bench stoprule: bespoke, budget %d, seeds 1..%d; rules:", budget, seeds);
    for (size_t r = 0; r < n_rules; r++)
        printf(" %s%s", rules[r]->name, r == ref ? " (baseline)" : "");
    printf("\n");
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        if (n_cells == MAX_CELLS) {
            fprintf(stderr, "stoprule: --cells: at most %d\n", MAX_CELLS);
            return 2;
        }
        SimCluster *sim = simcluster_new(tok, &err);
        if (!sim) {
            fprintf(stderr, "stoprule: --cells: %s\n", err.msg);
            return 2;
        }
        Cell *c = &cellv[n_cells++];
        snprintf(c->spec, sizeof c->spec, "%s", tok);
        c->best_known_s = simcluster_best_known(sim, NULL);
        c->s = calloc((size_t)seeds, sizeof *c->s);
        c->o = calloc(n_rules * (size_t)seeds, sizeof *c->o);
        if (!c->s || !c->o) {
            fprintf(stderr, "stoprule: out of memory for %s's %d sessions\n", tok, seeds);
            return 1;
        }
        for (int k = 0; k < seeds; k++) {
            if (run_session(sim, c->best_known_s, (uint64_t)k + 1, budget, &c->s[k], &err) < 0) {
                fprintf(stderr, "stoprule: %s seed %d: %s\n", tok, k + 1, err.msg);
                rc = 1;
            }
            for (size_t r = 0; r < n_rules; r++)
                c->o[r * (size_t)seeds + (size_t)k] = judge(rules[r], &c->s[k]);
        }
        simcluster_free(sim);
        printf("\n%s (best-known %.4g s)\n", c->spec, c->best_known_s);
        printf("  first within %.2fx:", CLOSE);
        for (int k = 0; k < seeds; k++)
            printf(" %d", c->s[k].first_close);
        printf("   (0: never)\n");
        printf("  ratio at trial %d:", budget);
        for (int k = 0; k < seeds; k++)
            printf(" %.3f", c->s[k].n ? c->s[k].ratio[c->s[k].n - 1] : INFINITY);
        printf("   (the whole budget)\n");
        printf("  %-14s %-28s %-28s %s\n", "rule", "stopped at (per seed)", "ratio at stop",
               "trials after 1.02x");
        for (size_t r = 0; r < n_rules; r++) {
            char a[256] = "", b[256] = "", d[256] = "", x[32];
            for (int k = 0; k < seeds; k++) {
                const Outcome *o = &c->o[r * (size_t)seeds + (size_t)k];
                size_t la = strlen(a), lb = strlen(b), ld = strlen(d);
                snprintf(a + la, sizeof a - la, "%s%d", k ? " " : "", o->stop);
                snprintf(b + lb, sizeof b - lb, "%s%s", k ? " " : "",
                         fmt_ratio(o->ratio, x, sizeof x));
                if (o->after_close >= 0)
                    snprintf(d + ld, sizeof d - ld, "%s%d", k ? " " : "", o->after_close);
                else
                    snprintf(d + ld, sizeof d - ld, "%s-", k ? " " : "");
            }
            printf("  %-14s %-28s %-28s %s\n", rules[r]->name, a, b, d);
        }
        fflush(stdout);
    }

    /* Over every cell and seed. */
    size_t runs = n_cells * (size_t)seeds;
    double *v = calloc(runs + 1, sizeof *v), *w = calloc(runs + 1, sizeof *w);
    if (!v || !w) {
        fprintf(stderr, "stoprule: out of memory for the summary of %zu sessions\n", runs);
        return 1;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "budget", budget);
    cJSON_AddNumberToObject(root, "seeds", seeds);
    cJSON *jr = cJSON_AddArrayToObject(root, "rules");
    printf("\nall %zu sessions (%zu cells x %d seeds)\n", runs, n_cells, seeds);
    printf("  %-14s %7s %11s %12s %12s %12s %8s %s\n", "rule", "median", "vs baseline",
           "worst ratio", "worst vs", "median after", "never", "before");
    printf("  %-14s %7s %11s %12s %12s %12s %8s %s\n", "", "stop", "(median)", "at stop",
           "budget end", "1.02x", "stopped", "1.05x");
    for (size_t r = 0; r < n_rules; r++) {
        size_t n = 0, m = 0;
        int never = 0, early = 0;
        double worst = 0, loss = 1;
        for (size_t ci = 0; ci < n_cells; ci++)
            for (int k = 0; k < seeds; k++) {
                const Outcome *o = &cellv[ci].o[r * (size_t)seeds + (size_t)k];
                const Session *ss = &cellv[ci].s[k];
                if (ss->n && o->ratio / ss->ratio[ss->n - 1] > loss)
                    loss = o->ratio / ss->ratio[ss->n - 1];
                const Outcome *base = &cellv[ci].o[ref * (size_t)seeds + (size_t)k];
                v[n++] = o->stop;
                w[m++] = base->stop > 0 ? (double)o->stop / base->stop : NAN;
                never += o->stop >= cellv[ci].s[k].n;
                early += o->ratio > TOO_EARLY;
                if (o->ratio > worst)
                    worst = o->ratio;
            }
        double med = median_sorting(v, n), med_ratio = median_sorting(w, m);
        n = 0;
        for (size_t ci = 0; ci < n_cells; ci++)
            for (int k = 0; k < seeds; k++) {
                const Outcome *o = &cellv[ci].o[r * (size_t)seeds + (size_t)k];
                if (o->after_close >= 0)
                    v[n++] = o->after_close;
            }
        double after = median_sorting(v, n);
        char x[32];
        printf("  %-14s %7.1f %11.2f %12s %12.3f %12.1f %8d %d\n", rules[r]->name, med, med_ratio,
               fmt_ratio(worst, x, sizeof x), loss, after, never, early);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", rules[r]->name);
        cJSON_AddStringToObject(j, "summary", rules[r]->summary);
        cJSON_AddNumberToObject(j, "median_stop", med);
        cJSON_AddNumberToObject(j, "median_stop_vs_baseline", med_ratio);
        cJSON_AddNumberToObject(j, "worst_ratio_at_stop", isfinite(worst) ? worst : -1);
        cJSON_AddNumberToObject(j, "worst_ratio_at_stop_vs_budget_end", loss);
        cJSON_AddNumberToObject(j, "median_trials_after_close", after);
        cJSON_AddNumberToObject(j, "never_stopped", never);
        cJSON_AddNumberToObject(j, "stopped_before_1_05", early);
        cJSON_AddItemToArray(jr, j);
    }
    free(v);
    free(w);
    cJSON *jc = cJSON_AddArrayToObject(root, "cells");
    for (size_t ci = 0; ci < n_cells; ci++) {
        const Cell *c = &cellv[ci];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "cell", c->spec);
        cJSON_AddNumberToObject(j, "best_known_s", c->best_known_s);
        cJSON *js = cJSON_AddArrayToObject(j, "sessions");
        for (int k = 0; k < seeds; k++) {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddNumberToObject(s, "seed", k + 1);
            cJSON_AddNumberToObject(s, "first_within_1_02", c->s[k].first_close);
            cJSON_AddNumberToObject(s, "cpu_s", c->s[k].cpu_s);
            cJSON *stops = cJSON_AddObjectToObject(s, "stops");
            for (size_t r = 0; r < n_rules; r++) {
                const Outcome *o = &c->o[r * (size_t)seeds + (size_t)k];
                cJSON *jo = cJSON_AddObjectToObject(stops, rules[r]->name);
                cJSON_AddNumberToObject(jo, "stop", o->stop);
                cJSON_AddNumberToObject(jo, "ratio", isfinite(o->ratio) ? o->ratio : -1);
                cJSON_AddNumberToObject(jo, "after_close", o->after_close);
            }
            cJSON_AddItemToObject(s, "trials", session_json(&c->s[k]));
            cJSON_AddItemToArray(js, s);
        }
        cJSON_AddItemToArray(jc, j);
        free(c->s);
        free(c->o);
    }
    printf("\n%.0f s wall, %.0f s CPU\n", clock_now_s() - wall0, clock_cpu_s() - cpu0);
    if (out_path && jsonfile_write(out_path, root, &err) < 0) {
        fprintf(stderr, "stoprule: --out %s\n", err.msg);
        rc = 1;
    }
    cJSON_Delete(root);
    return rc;
}
