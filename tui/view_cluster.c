/* The cluster view (per-host load bars, GPU allocation grid, job list) drawn from a
 * ClusterSnapshot, and the hosts view. */
#include <curses.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/duration.h"
#include "core/base/plural.h"
#include "tui/app.h"
#include "tui/draw.h"
#include "tui/simsched.h"
#include "tui/view.h"

static void labelled_bar(int y, int x, int w, const char *label, double v, Role role)
{
    int lw = draw_textf(y, x, w, ROLE_DIM, "%s ", label);
    if (w - lw < 2)
        return;
    if (!isfinite(v))
        draw_text(y, x + lw, w - lw, ROLE_DIM, "n/a");
    else
        draw_bar(y, x + lw, w - lw - 1, v, role);
}

/* The first host shown when `scroll` hosts are scrolled off a pane of `rows` rows: never so far
 * that the pane has room under the last host (as after a taller resize). */
static size_t loads_top(size_t n_hosts, int rows, size_t scroll)
{
    size_t fit = rows > 0 ? (size_t)rows : 1;
    size_t max = n_hosts > fit ? n_hosts - fit : 0;
    return scroll < max ? scroll : max;
}

static void draw_loads(const ClusterSnapshot *s, Rect box, size_t scroll)
{
    char title[200];
    snprintf(title, sizeof title, "Tuning workers: %s", s->source);
    Rect r = draw_box(box, title, 0);
    if (r.h < 1)
        return;
    int name_w = r.w >= 60 ? 10 : 8, role_w = 5;
    int bars_w = r.w - name_w - role_w;
    int nbars = bars_w >= 4 * 10 ? 4 : bars_w >= 2 * 10 ? 2 : 0;
    int each = nbars ? bars_w / nbars : 0;
    scroll = loads_top(s->n_hosts, r.h, scroll);
    for (int i = 0; i < r.h && scroll + (size_t)i < s->n_hosts; i++) {
        const HostLoad *h = &s->hosts[scroll + (size_t)i];
        int y = r.y + i;
        char name[160];
        draw_textf(y, r.x, name_w, h->role[0] ? ROLE_NORMAL : ROLE_DIM, "%-*s", name_w - 1,
                   draw_fit_cell(name, sizeof name, h->name, name_w - 1));
        draw_textf(y, r.x + name_w, role_w, ROLE_DIM, "%-4s", h->role);
        int x = r.x + name_w + role_w;
        if (nbars >= 2) {
            labelled_bar(y, x, each, "cpu", h->cpu, ROLE_BAR_CPU);
            labelled_bar(y, x + each, each, "gpu", h->gpu, ROLE_BAR_GPU);
        }
        if (nbars == 4) {
            labelled_bar(y, x + 2 * each, each, "mem", h->mem, ROLE_BAR_MEM);
            labelled_bar(y, x + 3 * each, each, "bat", h->share, ROLE_BAR_SHARE);
        }
    }
}

static wchar_t job_label(const ClusterSnapshot *s, int j)
{
    if (j >= 0 && (size_t)j < s->n_jobs && s->jobs[j].label)
        return (wchar_t)s->jobs[j].label;
    return (wchar_t)(L'A' + j % 26);
}

static void draw_grid(const ClusterSnapshot *s, Rect box)
{
    const HostLoad *hosts = s->grid ? s->grid : s->hosts;
    size_t n_hosts = s->grid ? s->n_grid : s->n_hosts;
    size_t gpus = 0, held = 0, foreign = 0, kept = 0;
    for (size_t i = 0; i < n_hosts; i++)
        for (int g = 0; g < hosts[i].n_gpus; g++) {
            gpus++;
            held += hosts[i].gpu_job[g] >= 0;
            foreign += hosts[i].gpu_job[g] == SNAP_GPU_FOREIGN;
            kept += hosts[i].gpu_job[g] == SNAP_GPU_KEPT;
        }
    char title[240], others[64] = "", pending[80] = "";
    if (foreign) /* the legend of the foreign glyph, only where there are some */
        snprintf(others, sizeof others, ", %zu %s other users' jobs", foreign,
                 draw_unicode() ? "\xe2\x96\x92" : "#");
    if (kept) /* and of the kept one */
        snprintf(pending, sizeof pending, ", %zu %s kept for pending jobs", kept,
                 draw_unicode() ? "\xe2\x96\x91" : "+");
    snprintf(title, sizeof title, "GPUs: %zu/%zu held%s%s%s%s", held, gpus, others, pending,
             s->grid ? ", " : "", s->grid ? s->grid_source : "");
    Rect r = draw_box(box, title, 0);
    if (r.h < 1)
        return;
    if (gpus == 0) {
        draw_text(r.y, r.x, r.w, ROLE_DIM, "no GPU in this cluster");
        return;
    }
    /* Hosts packed left to right: "name ▮▮▮▮▮▮▮▮ " per host. */
    int name_w = 7, x = 0, y = 0;
    for (size_t i = 0; i < n_hosts && y < r.h; i++) {
        const HostLoad *h = &hosts[i];
        if (h->n_gpus == 0)
            continue;
        int cell_w = name_w + h->n_gpus + 1;
        if (x + cell_w > r.w && x > 0) {
            x = 0;
            y++;
            if (y >= r.h) {
                break;
            }
        }
        char name[64];
        draw_textf(r.y + y, r.x + x, name_w, h->role[0] ? ROLE_WARN : ROLE_DIM, "%-*s",
                   name_w - 1, draw_fit_cell(name, sizeof name, h->name, name_w - 1));
        for (int g = 0; g < h->n_gpus && x + name_w + g < r.w; g++) {
            int j = h->gpu_job[g];
            if (j == SNAP_GPU_FOREIGN)
                draw_wchar(r.y + y, r.x + x + name_w + g, draw_unicode() ? L'\x2592' : L'#',
                           ROLE_WARN);
            else if (j == SNAP_GPU_KEPT)
                draw_wchar(r.y + y, r.x + x + name_w + g, draw_unicode() ? L'\x2591' : L'+',
                           ROLE_DIM);
            else if (j < 0)
                draw_wchar(r.y + y, r.x + x + name_w + g, draw_unicode() ? L'\x00b7' : L'.',
                           ROLE_DIM);
            else
                draw_wchar(r.y + y, r.x + x + name_w + g, job_label(s, j),
                           (Role)(ROLE_JOB0 + j % 8));
        }
        x += cell_w;
    }
}

/* Active jobs first (resizing, running, queued, paused), then finished; not yet arrived
 * jobs are left out. */
static int job_rank(const JobRow *j)
{
    static const int RANK[] = {2, 0, 1, 3, 4, 9}; /* by SchedJobState order */
    return j->state >= 0 && j->state < 6 ? RANK[j->state] : 1;
}

/* The jobs the list shows (arrived ones), in its order: by job_rank, then as the snapshot
 * has them. Fills order (n_jobs entries at most); returns how many. */
static size_t jobs_in_order(const ClusterSnapshot *s, size_t *order)
{
    size_t n = 0;
    for (int rank = 0; rank < 9; rank++)
        for (size_t i = 0; i < s->n_jobs; i++)
            if (job_rank(&s->jobs[i]) == rank)
                order[n++] = i;
    return n;
}

/* A job's row: its label, "name gpus* state " (JOB_LEAD_W columns), the progress bar (half
 * its width on a narrow pane, as the default 100 columns gives), then its tail: eta,
 * resizes, history (job_tail), then its note. */
enum { JOB_LEAD_W = 29 };

static int job_bar_w(int w)
{
    return w >= 72 ? 10 : 5;
}

static int job_tail(const JobRow *j, char *out, size_t cap)
{
    char eta[24]; /* "4m10s" as the live job's retry reads, not "250s"; "-" unknown */
    duration_text(eta, sizeof eta, j->eta_s);
    return snprintf(out, cap, "%6s %3d  %s", eta, j->resizes, j->history);
}

/* The lines a job's note takes under its row: 0 where it fits on the row, else wrapped
 * under the name (NOTE_INDENT), at most 3 (the note says why a job waits, or what its real
 * process does: it is read whole). */
enum { NOTE_INDENT = 5, NOTE_MAX_LINES = 3 };

static int note_lines(const JobRow *j, int w)
{
    char tail[128];
    int bar_w = job_bar_w(w);
    int row_w =
        JOB_LEAD_W + (JOB_LEAD_W + bar_w + 1 < w ? bar_w + 1 : 0) + job_tail(j, tail, sizeof tail);
    return draw_note_lines(j->note, w - row_w - 2, w, NOTE_INDENT, NOTE_MAX_LINES);
}

/* Which jobs a pane of `rows` lines `w` wide shows from the one asked for (never past the
 * page that ends with the last job): the first, and how many. */
typedef struct {
    size_t first, shown, listed;
} JobPage;

static JobPage jobs_page(const ClusterSnapshot *s, int w, int rows, size_t asked)
{
    JobPage p = {0, 0, 0};
    size_t *order = malloc((s->n_jobs ? s->n_jobs : 1) * sizeof *order);
    if (!order || rows <= 0) {
        free(order);
        return p;
    }
    p.listed = jobs_in_order(s, order);
    size_t last_first = p.listed;
    for (int used = 0; last_first > 0;) {
        used += 1 + note_lines(&s->jobs[order[last_first - 1]], w);
        if (used > rows && last_first < p.listed)
            break;
        last_first--;
    }
    p.first = asked < last_first ? asked : last_first;
    for (int used = 0; p.first + p.shown < p.listed; p.shown++) {
        used += 1 + note_lines(&s->jobs[order[p.first + p.shown]], w);
        if (used > rows && p.shown > 0)
            break; /* a job shows whole, its note with it (the first one at least its row) */
    }
    free(order);
    return p;
}

static void draw_job(const ClusterSnapshot *s, size_t i, Rect r, int y, int with_note)
{
    const JobRow *j = &s->jobs[i];
    int bar_w = job_bar_w(r.w);
    draw_wchar(y, r.x, job_label(s, (int)i), (Role)(ROLE_JOB0 + i % 8));
    int stalled = strcmp(j->state_name, "stalled") == 0;
    Role role = stalled ? ROLE_WARN : job_rank(j) >= 4 ? ROLE_DIM : ROLE_NORMAL;
    char name[64];
    int col = 3 + draw_textf(y, r.x + 3, r.w - 3, role, "%-12s %3d%c %-7s ",
                             draw_fit_cell(name, sizeof name, j->name, 12), j->gpus,
                             j->pinned ? '*' : ' ',
                             !stalled      ? j->state_name
                             : j->starting ? "start"
                                           : "resize");
    if (col + bar_w + 1 < r.w) {
        if (isfinite(j->progress))
            draw_bar(y, r.x + col, bar_w, j->progress, ROLE_BAR_SHARE);
        else
            draw_text(y, r.x + col, bar_w, ROLE_DIM, "n/a");
        col += bar_w + 1;
    }
    char tail[128];
    job_tail(j, tail, sizeof tail);
    draw_textf(y, r.x + col, r.w - col, role, "%s%s%s", tail, with_note ? "  " : "",
               with_note ? j->note : "");
}

static void draw_jobs(const ClusterSnapshot *s, Rect box, size_t scroll)
{
    char title[200], range[64] = "";
    int rows = box.h - 3; /* the borders and the column heads */
    JobPage p = jobs_page(s, box.w - 2, rows, scroll);
    /* A list longer than the pane says which rows show, and how to reach the others. */
    if (p.shown < p.listed)
        snprintf(range, sizeof range, "  %zu-%zu/%zu", p.first + 1, p.first + p.shown, p.listed);
    /* the legend only where a row has the mark */
    int pinned = 0;
    for (size_t i = 0; i < s->n_jobs && !pinned; i++)
        pinned = s->jobs[i].pinned;
    snprintf(title, sizeof title, "Jobs%s%s%s%s", s->jobs_source[0] ? ": " : "", s->jobs_source,
             pinned ? " (* pinned)" : "", range);
    Rect r = draw_box(box, title, 0);
    if (r.h < 1)
        return;
    if (s->n_jobs == 0) {
        draw_text(r.y, r.x, r.w, ROLE_DIM, s->jobs_absent[0] ? s->jobs_absent : "no job");
        return;
    }
    int bar_w = job_bar_w(r.w);
    draw_textf(r.y, r.x, r.w, ROLE_DIM, "   %-12s %4s %-7s %-*s %6s %3s  %s", "job", "gpus",
               "state", bar_w, bar_w >= 8 ? "progress" : "done", "eta", "rsz", "history");
    size_t *order = malloc((s->n_jobs ? s->n_jobs : 1) * sizeof *order);
    if (!order)
        return;
    jobs_in_order(s, order);
    int y = r.y + 1;
    for (size_t k = p.first; k < p.first + p.shown && y < r.y + r.h; k++) {
        const JobRow *j = &s->jobs[order[k]];
        int below = note_lines(j, r.w);
        draw_job(s, order[k], r, y++, !below);
        if (below > r.y + r.h - y)
            below = r.y + r.h - y; /* the first job of a page too small for its note */
        /* under the name, dimmed (a stalled job's as its row) */
        Role role = strcmp(j->state_name, "stalled") == 0 ? ROLE_WARN : ROLE_DIM;
        y += draw_note_below(y, r.x, r.w, NOTE_INDENT, below, role, j->note);
    }
    free(order);
}

void view_cluster_draw(const ClusterSnapshot *s, const Layout *l, size_t scroll,
                       size_t jobs_scroll)
{
    if (l->shown[PANE_LOADS])
        draw_loads(s, l->rect[PANE_LOADS], scroll);
    if (l->shown[PANE_GPUGRID])
        draw_grid(s, l->rect[PANE_GPUGRID]);
    if (l->shown[PANE_JOBS])
        draw_jobs(s, l->rect[PANE_JOBS], jobs_scroll);
}

void view_cluster_snapshot(App *a)
{
    const Cluster *c = a->cluster;
    ClusterSnapshot *s = &a->snap;
    if (!s->hosts)
        s->hosts = calloc(c->n_machines ? c->n_machines : 1, sizeof *s->hosts);
    if (!s->jobs) {
        s->jobs = calloc(1, sizeof *s->jobs);
        s->cap_jobs = 1;
    }
    s->n_hosts = c->n_machines;
    /* The newest trial that measured something. */
    const TrialRecord *rec = NULL;
    for (size_t i = a->tuner ? tuner_n_trials(a->tuner) : 0; i-- > 0;) {
        const TrialRecord *t = tuner_trial(a->tuner, i);
        if (t->obs && t->obs->status == TRIAL_OK) {
            rec = t;
            break;
        }
    }
    if (!a->tuner && !a->ss && a->slurm)
        snprintf(s->source, sizeof s->source, "no tuning (Slurm's nodes: the hosts view, 3)");
    else if (!a->tuner)
        snprintf(s->source, sizeof s->source, "no tuning (the live jobs are in the grid)");
    else if (rec)
        snprintf(s->source, sizeof s->source, "trial %d measured", rec->trial);
    else
        snprintf(s->source, sizeof s->source, "no trial measured yet");
    const Schedule *sch = rec ? rec->suggestion.schedule : NULL;
    const Observation *o = rec ? rec->obs : NULL;
    int batch = a->job && a->job->batch > 0 ? a->job->batch : 1;
    int gpus_used = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        HostLoad *h = &s->hosts[m];
        const MachineType *t = cluster_machine_type(c, m);
        snprintf(h->name, sizeof h->name, "%s", c->machines[m].name);
        h->role[0] = 0;
        if (sch)
            snprintf(h->role, sizeof h->role, "%s",
                     sch->worker[m] && sch->ps[m] ? "W+PS"
                     : sch->worker[m]             ? "W"
                     : sch->ps[m]                 ? "PS"
                                                  : "");
        h->cpu = h->gpu = h->mem = h->share = NAN;
        h->n_gpus = 0;
        double gpu_sum = 0, mem_max = NAN;
        int gpu_n = 0;
        for (size_t d = 0; d < t->n_devices; d++) {
            size_t flat = c->machines[m].first_device + d;
            const DeviceSpec *dev = &t->devices[d];
            /* Busy fraction of an iteration: the device's compute time over the iteration. */
            double busy = o && o->device_time_s && o->device_time_s[flat] >= 0 && o->time_s > 0
                              ? o->device_time_s[flat] / o->time_s
                              : NAN;
            if (sch && sch->inputs[flat] == 0)
                busy = 0;
            if (dev->kind == DEVICE_CPU) {
                h->cpu = busy;
            } else {
                if (isfinite(busy)) {
                    gpu_sum += busy;
                    gpu_n++;
                }
                if (sch && dev->max_inputs > 0) {
                    double mem = (double)sch->inputs[flat] / dev->max_inputs;
                    mem_max = isnan(mem_max) || mem > mem_max ? mem : mem_max;
                }
                if (h->n_gpus < SNAP_MAX_GPUS) {
                    h->gpu_job[h->n_gpus++] = sch && sch->inputs[flat] > 0 ? 0 : -1;
                    gpus_used += sch && sch->inputs[flat] > 0;
                }
            }
        }
        h->gpu = gpu_n ? gpu_sum / gpu_n : NAN;
        h->mem = mem_max;
        if (sch)
            h->share = sch->worker[m] ? (double)schedule_machine_inputs(sch, m) / batch : 0;
    }
    if (a->ss || !a->tuner)
        return; /* the job list is the scheduler's */
    s->n_jobs = 1;
    JobRow *j = &s->jobs[0];
    memset(j, 0, sizeof *j);
    j->state = -1;
    snprintf(j->name, sizeof j->name, "tune:%s", a->job->name);
    j->gpus = gpus_used;
    int budget = tuner_budget(a->tuner);
    size_t n = tuner_n_trials(a->tuner);
    j->progress = budget > 0 ? (double)n / budget : NAN;
    j->eta_s = NAN;
    if (n >= 2) {
        const TrialRecord *first = tuner_trial(a->tuner, 0), *last = tuner_trial(a->tuner, n - 1);
        double per = (last->started_s - first->started_s) / (double)(n - 1);
        j->eta_s = per * (budget - (long)n);
        if (j->eta_s < 0)
            j->eta_s = 0;
    }
    snprintf(j->history, sizeof j->history, "%zu trial%s", n, plural_s((long long)n));
    snprintf(j->note, sizeof j->note, "%s",
             tuner_paused(a->tuner) && a->user_paused ? "paused" : "");
    snprintf(s->jobs_absent, sizeof s->jobs_absent, "no scheduler in this session");
}

/* Before the first decision: jobs may have arrived and wait for GPUs (every host down, say),
 * which "waiting for the first arrival" would hide. */
static const char *no_decision_yet(const SchedState *st)
{
    static char text[64];
    size_t queued = 0;
    for (size_t i = 0; i < sched_job_count(st); i++) {
        SchedJobInfo info;
        queued += sched_job_info(st, i, &info) == 0 && info.state == SCHED_JOB_QUEUED;
    }
    if (!queued)
        return "waiting for the first arrival";
    snprintf(text, sizeof text, "%zu job%s arrived, waiting for GPUs", queued,
             queued == 1 ? "" : "s");
    return text;
}

void view_timeline_draw(const App *a, Rect box)
{
    Rect r = draw_box(box, "Resizes and decisions", 0);
    if (r.h < 1)
        return;
    if (!a->ss) {
        draw_text(r.y, r.x, r.w, ROLE_DIM, "no scheduler in this session");
        return;
    }
    const SchedState *st = simsched_state(a->ss);
    size_t n = sched_event_count(st);
    /* The newest at the bottom, like a log. */
    size_t first = n > (size_t)r.h ? n - (size_t)r.h : 0;
    for (size_t i = first; i < n; i++) {
        const SchedEvent *ev = sched_event(st, i);
        char text[160];
        simsched_event_text(a->ss, i, text, sizeof text);
        draw_text(r.y + (int)(i - first), r.x, r.w,
                  ev->kind == SCHED_EV_RESIZE   ? ROLE_WARN
                  : ev->kind == SCHED_EV_FINISH ? ROLE_GOOD
                                                : ROLE_NORMAL,
                  text);
    }
    if (n == 0)
        draw_text(r.y, r.x, r.w, ROLE_DIM, no_decision_yet(st));
}

static void cluster_draw(const App *a)
{
    view_cluster_draw(&a->snap, &a->layout, a->loads_scroll, a->jobs_scroll);
    if (a->layout.shown[PANE_TIMELINE])
        view_timeline_draw(a, a->layout.rect[PANE_TIMELINE]);
    if (a->layout.shown[PANE_LOG])
        view_log_draw(a, a->layout.rect[PANE_LOG]);
}

/* Up and down scroll the per-host loads; PgUp, PgDn, g and G the job list (as the wheel
 * does over either). */
static void cluster_key(App *a, ViewAction action)
{
    Rect box = a->layout.shown[PANE_JOBS] ? a->layout.rect[PANE_JOBS] : (Rect){0, 0, 0, 4};
    /* From where the list shows now: a scroll left past the end by a shrinking list or a
     * taller pane does not swallow the next keys. */
    JobPage p = jobs_page(&a->snap, box.w - 2, box.h - 3, a->jobs_scroll);
    size_t page = p.shown > 1 ? p.shown - 1 : 1;
    /* the loads likewise from where they show now, so that a Down past the last host is not
     * kept for the next Up to take back unseen */
    int rows = a->layout.shown[PANE_LOADS] ? a->layout.rect[PANE_LOADS].h - 2 : 1;
    a->loads_scroll = loads_top(a->snap.n_hosts, rows, a->loads_scroll);
    if (action == VIEW_ACT_UP && a->loads_scroll)
        a->loads_scroll--;
    else if (action == VIEW_ACT_DOWN)
        a->loads_scroll = loads_top(a->snap.n_hosts, rows, a->loads_scroll + 1);
    else if (action == VIEW_ACT_PAGE_UP)
        a->jobs_scroll = p.first > page ? p.first - page : 0;
    else if (action == VIEW_ACT_PAGE_DOWN)
        a->jobs_scroll = jobs_page(&a->snap, box.w - 2, box.h - 3, p.first + page).first;
    else if (action == VIEW_ACT_FIRST)
        a->jobs_scroll = 0;
    else if (action == VIEW_ACT_LAST)
        a->jobs_scroll = SIZE_MAX; /* the last page as the list changes (jobs_page) */
}

static void cluster_mouse(App *a, const MEVENT *ev)
{
    if (!(ev->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)))
        return;
    int up = (ev->bstate & BUTTON4_PRESSED) != 0;
    const Layout *l = &a->layout;
    if (l->shown[PANE_JOBS] && rect_contains(l->rect[PANE_JOBS], ev->x, ev->y)) {
        Rect box = l->rect[PANE_JOBS];
        size_t top = jobs_page(&a->snap, box.w - 2, box.h - 3, a->jobs_scroll).first;
        a->jobs_scroll =
            up ? (top ? top - 1 : 0) : jobs_page(&a->snap, box.w - 2, box.h - 3, top + 1).first;
    } else {
        cluster_key(a, up ? VIEW_ACT_UP : VIEW_ACT_DOWN);
    }
    a->dirty = 1;
}

const View VIEW_CLUSTER_TABLE = {"Cluster", cluster_draw, cluster_key, cluster_mouse};
