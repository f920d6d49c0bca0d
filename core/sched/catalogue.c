/* Loading the measured job models (Pollux traces, the seed's ResNet-110) and answering
 * step times and efficiency from them, as the Pollux artifact's simulator does. */
#include "core/sched/catalogue.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/csvtab.h"

/* Epochs each model runs in the Pollux artifact (its applications.py); yolov3 fits at most
 * 8 samples per GPU. */
static const struct {
    const char *name;
    int epochs, max_local;
} POLLUX_MODELS[] = {
    {"bert", 2, 0},      {"cifar10", 100, 0}, {"deepspeech2", 80, 0},
    {"imagenet", 90, 0}, {"ncf", 10, 0},      {"yolov3", 50, 8},
};

/* The seed's ResNet-110 on CIFAR-10 (K40m, 128 images per GPU): step times from Table 1
 * (128 / images-per-second), and epochs to converge per global batch implied by Table 3's
 * no-contention column (hours × Table 1 throughput / 50,000 images). */
static const double SEED_STEP_MS[4] = {402.5, 427.2, 444.3, 470.2};
static const int SEED_GPUS[4] = {1, 2, 4, 8};
static const int SEED_BATCH[4] = {128, 256, 512, 1024};
static const double SEED_EPOCHS[4] = {145.8, 156.8, 183.4, 219.5};
#define SEED_EPOCH_STEPS (50000.0 / 128.0)

static double interp1(const double *x, const double *y, size_t n, double q)
{
    if (n == 0)
        return NAN;
    if (n == 1 || q <= x[0])
        return y[0];
    if (q >= x[n - 1])
        return y[n - 1];
    size_t lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (x[mid] <= q)
            lo = mid;
        else
            hi = mid;
    }
    double t = (q - x[lo]) / (x[hi] - x[lo]);
    return y[lo] + t * (y[hi] - y[lo]);
}

static void curve_free(TraceCurve *c)
{
    free(c->bsz);
    free(c->step_s);
    free(c->sync_s);
}

static void app_free(AppModel *a)
{
    free(a->val_bsz);
    free(a->epoch_progress);
    free(a->grad_sqr);
    free(a->grad_var);
    free(a->seed_epochs);
    for (size_t i = 0; i < a->n_place; i++)
        curve_free(&a->place[i]);
    free(a->place);
    free(a->place_id);
    for (size_t i = 0; i < a->n_cfg; i++)
        curve_free(&a->cfg[i]);
    free(a->cfg);
}

void catalogue_free(Catalogue *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        app_free(&c->apps[i]);
    free(c->apps);
    free(c);
}

typedef struct {
    int nodes, replicas;
    double bsz, step, sync;
    char id[24];
} Row;

static int row_cmp_cfg(const void *pa, const void *pb)
{
    const Row *a = pa, *b = pb;
    if (a->nodes != b->nodes)
        return a->nodes - b->nodes;
    if (a->replicas != b->replicas)
        return a->replicas - b->replicas;
    return (a->bsz > b->bsz) - (a->bsz < b->bsz);
}

static int row_cmp_id(const void *pa, const void *pb)
{
    const Row *a = pa, *b = pb;
    int c = strcmp(a->id, b->id);
    return c ? c : (a->bsz > b->bsz) - (a->bsz < b->bsz);
}

/* Groups sorted rows into curves; rows with equal key and batch are averaged. `by_id`
 * groups by placement string, else by (nodes, replicas). */
static int group(Row *rows, size_t n, int by_id, TraceCurve **out, size_t *nout, char (**ids)[24])
{
    qsort(rows, n, sizeof *rows, by_id ? row_cmp_id : row_cmp_cfg);
    TraceCurve *cs = calloc(n ? n : 1, sizeof *cs);
    char(*idv)[24] = by_id ? calloc(n ? n : 1, sizeof *idv) : NULL;
    if (!cs || (by_id && !idv)) {
        free(cs);
        free(idv);
        return -1;
    }
    size_t nc = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n &&
               (by_id ? strcmp(rows[j].id, rows[i].id) == 0
                      : rows[j].nodes == rows[i].nodes && rows[j].replicas == rows[i].replicas))
            j++;
        TraceCurve *c = &cs[nc];
        c->nodes = rows[i].nodes;
        c->replicas = rows[i].replicas;
        c->bsz = malloc((j - i) * sizeof(double));
        c->step_s = malloc((j - i) * sizeof(double));
        c->sync_s = malloc((j - i) * sizeof(double));
        if (!c->bsz || !c->step_s || !c->sync_s)
            return -1;
        for (size_t k = i; k < j;) {
            size_t e = k;
            double st = 0, sy = 0;
            while (e < j && rows[e].bsz == rows[k].bsz) {
                st += rows[e].step;
                sy += rows[e].sync;
                e++;
            }
            c->bsz[c->n] = rows[k].bsz;
            c->step_s[c->n] = st / (double)(e - k);
            c->sync_s[c->n] = sy / (double)(e - k);
            c->n++;
            k = e;
        }
        if (by_id)
            strcpy(idv[nc], rows[i].id);
        nc++;
        i = j;
    }
    *out = cs;
    *nout = nc;
    if (by_id)
        *ids = idv;
    return 0;
}

static int load_traces(AppModel *a, const char *dir, Error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/placements.csv", dir);
    CsvTable *p = csvtab_load(path, err);
    if (!p)
        return -1;
    /* The placements set the model's batch range: with none, every batch is out of it. */
    if (p->nrows == 0) {
        error_set(err, "%s: expected rows of placement measurements, found no measurement",
                  p->path);
        csvtab_free(p);
        return -1;
    }
    snprintf(path, sizeof path, "%s/scalability.csv", dir);
    CsvTable *s = csvtab_load(path, err);
    if (!s) {
        csvtab_free(p);
        return -1;
    }
    size_t n = p->nrows + s->nrows;
    Row *rows = calloc(n ? n : 1, sizeof *rows);
    int rc = rows ? 0 : error_no_memory(err, "%s", dir);
    int pc = csvtab_col(p, "placement", err), pb = csvtab_col(p, "local_bsz", err);
    int pt = csvtab_col(p, "step_time", err), ps = csvtab_col(p, "sync_time", err);
    int sn = csvtab_col(s, "num_nodes", err), sr = csvtab_col(s, "num_replicas", err);
    int sb = csvtab_col(s, "local_bsz", err), st = csvtab_col(s, "step_time", err);
    int ss = csvtab_col(s, "sync_time", err);
    if (pc < 0 || pb < 0 || pt < 0 || ps < 0 || sn < 0 || sr < 0 || sb < 0 || st < 0 || ss < 0)
        rc = -1;
    a->min_local = 1 << 30;
    a->max_local = 0;
    for (size_t i = 0; rc == 0 && i < p->nrows; i++) {
        Row *r = &rows[i];
        const char *id = csvtab_cell(p, i, pc);
        size_t len = strlen(id);
        if (len == 0 || len >= sizeof r->id || strspn(id, "0123456789") != len) {
            rc = error_set(err,
                           "%s:%zu: field 'placement': expected digits (GPUs per node), "
                           "found '%s'",
                           p->path, p->lines[i], id);
            break;
        }
        strcpy(r->id, id);
        r->nodes = (int)len;
        for (size_t k = 0; k < len; k++)
            r->replicas += id[k] - '0';
        if (csvtab_number(p, i, pb, 1, 1e9, &r->bsz, err) < 0 ||
            csvtab_number(p, i, pt, 0, 1e6, &r->step, err) < 0 ||
            csvtab_number(p, i, ps, 0, 1e6, &r->sync, err) < 0)
            rc = -1;
        if ((int)r->bsz < a->min_local)
            a->min_local = (int)r->bsz;
        if ((int)r->bsz > a->max_local)
            a->max_local = (int)r->bsz;
    }
    for (size_t i = 0; rc == 0 && i < s->nrows; i++) {
        Row *r = &rows[p->nrows + i];
        double nn = 0, nr = 0; /* read even when a cell was bad (clang -Wsometimes-uninitialized) */
        if (csvtab_number(s, i, sn, 1, 1e6, &nn, err) < 0 ||
            csvtab_number(s, i, sr, 1, 1e6, &nr, err) < 0 ||
            csvtab_number(s, i, sb, 1, 1e9, &r->bsz, err) < 0 ||
            csvtab_number(s, i, st, 0, 1e6, &r->step, err) < 0 ||
            csvtab_number(s, i, ss, 0, 1e6, &r->sync, err) < 0) {
            rc = -1;
            break;
        }
        r->nodes = (int)nn;
        r->replicas = (int)nr;
    }
    if (rc == 0) {
        /* The fitted model sees every measured point. */
        TputPoint *pts = malloc(n * sizeof *pts);
        if (!pts)
            rc = error_no_memory(err, "%s", dir);
        for (size_t i = 0; rc == 0 && i < n; i++)
            pts[i] = (TputPoint){rows[i].replicas, rows[i].nodes, rows[i].bsz, rows[i].step};
        if (rc == 0 && tputmodel_fit_best(&a->fitted, pts, n, err) < 0)
            rc = error_prefix(err, "%s", dir);
        free(pts);
    }
    if (rc == 0 && (group(rows, p->nrows, 1, &a->place, &a->n_place, &a->place_id) < 0 ||
                    group(rows, n, 0, &a->cfg, &a->n_cfg, NULL) < 0))
        rc = error_no_memory(err, "%s", dir);
    free(rows);
    csvtab_free(p);
    csvtab_free(s);
    return rc;
}

static int int_cmp(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int load_validation(AppModel *a, const char *dir, Error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return error_set(err, "%s: cannot open the folder", dir);
    struct dirent *e;
    int bs[64];
    size_t nb = 0;
    while ((e = readdir(d)) && nb < 64) {
        int b;
        char tail[8];
        if (sscanf(e->d_name, "validation-%d.%7s", &b, tail) == 2 && strcmp(tail, "csv") == 0 &&
            b > 0)
            bs[nb++] = b;
    }
    closedir(d);
    if (nb == 0)
        return error_set(err, "%s: expected validation-<batch>.csv files, found none", dir);
    qsort(bs, nb, sizeof *bs, int_cmp);
    a->n_val = nb;
    a->val_bsz = malloc(nb * sizeof *a->val_bsz);
    a->grad_sqr = calloc(nb * (size_t)a->epochs, sizeof(double));
    a->grad_var = calloc(nb * (size_t)a->epochs, sizeof(double));
    a->epoch_progress = calloc((size_t)a->epochs + 1, sizeof(double));
    if (!a->val_bsz || !a->grad_sqr || !a->grad_var || !a->epoch_progress)
        return error_no_memory(err, "%s", dir);
    memcpy(a->val_bsz, bs, nb * sizeof *bs);
    a->init_batch = bs[0];
    a->max_batch = bs[nb - 1];
    for (size_t v = 0; v < nb; v++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/validation-%d.csv", dir, bs[v]);
        CsvTable *t = csvtab_load(path, err);
        if (!t)
            return -1;
        int cp = csvtab_col(t, "progress", err), cq = csvtab_col(t, "grad_sqr", err);
        int cv = csvtab_col(t, "grad_var", err);
        int rc = cp < 0 || cq < 0 || cv < 0 ? -1 : 0;
        if (rc == 0 && t->nrows < (size_t)a->epochs)
            rc = error_set(err, "%s: expected %d rows (one per epoch), found %zu", path, a->epochs,
                           t->nrows);
        for (int ep = 0; rc == 0 && ep < a->epochs; ep++) {
            double prog, sq, var;
            if (csvtab_number(t, (size_t)ep, cp, 0, 1e12, &prog, err) < 0 ||
                csvtab_number(t, (size_t)ep, cq, 0, 1e300, &sq, err) < 0 ||
                csvtab_number(t, (size_t)ep, cv, 0, 1e300, &var, err) < 0) {
                rc = -1;
                break;
            }
            a->grad_sqr[v * (size_t)a->epochs + (size_t)ep] = sq;
            a->grad_var[v * (size_t)a->epochs + (size_t)ep] = var;
            if (v == 0)
                a->epoch_progress[ep + 1] = prog;
        }
        csvtab_free(t);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int add_seed_resnet(AppModel *a, Error *err)
{
    strcpy(a->name, "resnet110");
    a->epochs = (int)ceil(SEED_EPOCHS[0]);
    a->fixed_local = 128;
    a->min_local = a->max_local = 128;
    a->init_batch = 128;
    a->max_batch = 1024; /* the seed measured up to 8 GPUs (one node); so do we */
    a->n_val = 4;
    a->val_bsz = malloc(4 * sizeof *a->val_bsz);
    a->seed_epochs = malloc(4 * sizeof *a->seed_epochs);
    a->epoch_progress = malloc(((size_t)a->epochs + 1) * sizeof(double));
    if (!a->val_bsz || !a->seed_epochs || !a->epoch_progress)
        return error_no_memory(err, "catalogue");
    for (int i = 0; i < 4; i++) {
        a->val_bsz[i] = SEED_BATCH[i];
        a->seed_epochs[i] = SEED_EPOCHS[i];
    }
    /* Progress is in 1-GPU steps; the job converges after SEED_EPOCHS[0] 1-GPU epochs. */
    for (int e = 0; e <= a->epochs; e++)
        a->epoch_progress[e] = fmin(e, SEED_EPOCHS[0]) * SEED_EPOCH_STEPS;
    TputPoint pts[4];
    for (int i = 0; i < 4; i++)
        pts[i] = (TputPoint){SEED_GPUS[i], 1, 128, SEED_STEP_MS[i] / 1000.0};
    if (tputmodel_fit(&a->fitted, ALLREDUCE_DOUBLING, pts, 4, err) < 0)
        return error_prefix(err, "resnet110 (seed Table 1)");
    return 0;
}

Catalogue *catalogue_load(const char *dir, Error *err)
{
    if (!dir) { /* the caller (main) decides where data lives */
        error_set(err, "catalogue: no data folder given");
        return NULL;
    }
    size_t nm = sizeof POLLUX_MODELS / sizeof POLLUX_MODELS[0];
    Catalogue *c = calloc(1, sizeof *c);
    if (!c || !(c->apps = calloc(nm + 1, sizeof *c->apps))) {
        free(c);
        error_no_memory(err, "catalogue");
        return NULL;
    }
    for (size_t i = 0; i < nm; i++) {
        AppModel *a = &c->apps[c->n++];
        snprintf(a->name, sizeof a->name, "%s", POLLUX_MODELS[i].name);
        a->epochs = POLLUX_MODELS[i].epochs;
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/traces/%s", dir, a->name);
        if (load_traces(a, sub, err) < 0 || load_validation(a, sub, err) < 0) {
            catalogue_free(c);
            error_mark(err, ERROR_INPUT);
            return NULL;
        }
        if (POLLUX_MODELS[i].max_local)
            a->max_local = POLLUX_MODELS[i].max_local;
    }
    if (add_seed_resnet(&c->apps[c->n++], err) < 0) {
        catalogue_free(c);
        return NULL;
    }
    return c;
}

const AppModel *catalogue_find(const Catalogue *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->apps[i].name, name) == 0)
            return &c->apps[i];
    return NULL;
}

void catalogue_names(const Catalogue *c, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < c->n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", c->apps[i].name);
}

static void curve_at(const TraceCurve *c, double m, double *step, double *sync)
{
    *step = interp1(c->bsz, c->step_s, c->n, m);
    *sync = interp1(c->bsz, c->sync_s, c->n, m);
}

/* Value at (nodes, replicas) for one node count: linear in replicas between the measured
 * configurations, held at the ends. */
static void cfg_at_nodes(const AppModel *a, size_t lo, size_t hi, int r, double m, double *st,
                         double *sy)
{
    size_t below = lo, above = hi - 1;
    for (size_t i = lo; i < hi; i++) {
        if (a->cfg[i].replicas <= r)
            below = i;
        if (a->cfg[i].replicas >= r) {
            above = i;
            break;
        }
    }
    double s0, y0, s1, y1;
    curve_at(&a->cfg[below], m, &s0, &y0);
    curve_at(&a->cfg[above], m, &s1, &y1);
    int r0 = a->cfg[below].replicas, r1 = a->cfg[above].replicas;
    double t = r1 > r0 ? (double)(r - r0) / (r1 - r0) : 0;
    t = fmin(1, fmax(0, t));
    *st = s0 + t * (s1 - s0);
    *sy = y0 + t * (y1 - y0);
}

static void cfg_interp(const AppModel *a, int nodes, int r, double m, double *st, double *sy)
{
    /* cfg is sorted by (nodes, replicas): find the node-count groups around `nodes`. */
    size_t i = 0, glo[2] = {0, 0}, ghi[2] = {0, 0};
    int gn[2] = {-1, -1};
    while (i < a->n_cfg) {
        size_t j = i;
        while (j < a->n_cfg && a->cfg[j].nodes == a->cfg[i].nodes)
            j++;
        int nn = a->cfg[i].nodes;
        if (nn <= nodes) {
            gn[0] = nn, glo[0] = i, ghi[0] = j;
        }
        if (nn >= nodes && gn[1] < 0) {
            gn[1] = nn, glo[1] = i, ghi[1] = j;
        }
        i = j;
    }
    if (gn[0] < 0)
        gn[0] = gn[1], glo[0] = glo[1], ghi[0] = ghi[1];
    if (gn[1] < 0)
        gn[1] = gn[0], glo[1] = glo[0], ghi[1] = ghi[0];
    double s0, y0, s1, y1;
    cfg_at_nodes(a, glo[0], ghi[0], r, m, &s0, &y0);
    cfg_at_nodes(a, glo[1], ghi[1], r, m, &s1, &y1);
    double t = gn[1] > gn[0] ? (double)(nodes - gn[0]) / (gn[1] - gn[0]) : 0;
    *st = s0 + t * (s1 - s0);
    *sy = y0 + t * (y1 - y0);
}

void app_step_time(const AppModel *a, const int *per_node, size_t n_nodes, double local_batch,
                   double *step_s, double *sync_s)
{
    int digits[64];
    size_t nd = 0;
    int replicas = 0, big = 0;
    for (size_t i = 0; i < n_nodes; i++)
        if (per_node[i] > 0) {
            if (nd < 64)
                digits[nd++] = per_node[i];
            replicas += per_node[i];
            big |= per_node[i] > 9;
        }
    if (a->n_cfg == 0 || replicas == 0) {
        *step_s =
            tputmodel_step_s(&a->fitted, replicas ? replicas : 1, (int)(nd ? nd : 1), local_batch);
        *sync_s = 0;
        return;
    }
    if (!big && nd > 0 && nd < 24) {
        /* The artifact's rule: a placement is its lexicographically smallest rotation. */
        char best[24] = {0}, cand[24];
        for (size_t r = 0; r < nd; r++) {
            for (size_t k = 0; k < nd; k++)
                cand[k] = (char)('0' + digits[(r + k) % nd]);
            cand[nd] = 0;
            if (r == 0 || strcmp(cand, best) < 0)
                strcpy(best, cand);
        }
        size_t lo = 0, hi = a->n_place;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(a->place_id[mid], best);
            if (c == 0) {
                curve_at(&a->place[mid], local_batch, step_s, sync_s);
                return;
            }
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    cfg_interp(a, (int)(nd > 16 ? 16 : nd), replicas, local_batch, step_s, sync_s);
}

double app_gain(const AppModel *a, double batch, int epoch)
{
    double scale = batch / a->init_batch;
    if (scale <= 1)
        return scale;
    if (a->seed_epochs) {
        /* Seed model: efficiency is the ratio of epochs to converge, linear in log2 batch
         * (extrapolated past the largest measured batch). */
        double lb = log2(batch), e;
        double x[4], y[4];
        for (int i = 0; i < 4; i++)
            x[i] = log2(a->val_bsz[i]), y[i] = a->seed_epochs[i];
        if (lb > x[3])
            e = y[3] + (lb - x[3]) * (y[3] - y[2]) / (x[3] - x[2]);
        else
            e = interp1(x, y, 4, lb);
        return scale * a->seed_epochs[0] / e;
    }
    if (epoch < 0)
        epoch = 0;
    if (epoch >= a->epochs)
        epoch = a->epochs - 1;
    double xs[64], sq[64], vr[64];
    size_t n = a->n_val < 64 ? a->n_val : 64;
    for (size_t v = 0; v < n; v++) {
        xs[v] = a->val_bsz[v];
        sq[v] = a->grad_sqr[v * (size_t)a->epochs + (size_t)epoch];
        vr[v] = a->grad_var[v * (size_t)a->epochs + (size_t)epoch];
    }
    double gs = interp1(xs, sq, n, batch), gv = interp1(xs, vr, n, batch);
    double den = gv / scale + gs;
    return den > 0 ? (gv + gs) / den : scale;
}

double app_total_progress(const AppModel *a)
{
    return a->epoch_progress[a->epochs];
}

int app_epoch_at(const AppModel *a, double progress)
{
    int lo = 0, hi = a->epochs;
    /* First epoch whose end lies beyond `progress`. */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a->epoch_progress[mid + 1] <= progress)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
