/* `tunedeck sessions`: lists the session journals, newest last, with what each got to. */
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/table_row.h"
#include "core/base/jsonprint.h"
#include "core/base/termsafe.h"
#include "cmd/commands.h"
#include "cmd/paths.h"
#include "core/base/exitcode.h"
#include "core/journal/journal.h"
#include "core/model/observation.h"
#include "remote/session/tune_journal.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tunedeck sessions [--json]\n"
                 "Lists the session journals ($TUNEDECK_STATE_DIR/sessions, else\n"
                 "$XDG_STATE_HOME/tunedeck/sessions, else ~/.local/state/tunedeck/sessions).\n"
                 "Resume one with `tunedeck tune --resume ID`.\n");
}

typedef struct {
    char id[JOURNAL_ID_MAX], created[32], target[128], optimizer[64];
    char state[ERROR_MSG_MAX + 32];
    int suggested, finished, ok, problems;
    long budget;
    double best_s;
} Summary;

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Which trials were suggested and which finished: a line that resume would skip (a trial
 * never suggested or finished twice, an unknown status, an ok without its time) is a
 * problem, never a count. */
typedef struct {
    unsigned char *state; /* per trial number: 1 suggested, 2 finished */
    size_t cap;
} TrialMarks;

static unsigned char *mark_of(TrialMarks *m, const cJSON *ev)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "trial");
    if (!cJSON_IsNumber(t) || t->valuedouble < 1 || t->valuedouble > 1e6 ||
        t->valuedouble != (double)(long)t->valuedouble)
        return NULL;
    size_t i = (size_t)t->valuedouble;
    if (i >= m->cap) {
        size_t cap = i * 2 + 16;
        unsigned char *g = realloc(m->state, cap);
        if (!g)
            return NULL;
        memset(g + m->cap, 0, cap - m->cap);
        m->state = g;
        m->cap = cap;
    }
    return &m->state[i];
}

static int status_known(const char *name)
{
    TrialStatus status;
    return trial_status_from_name(name, &status) == 0;
}

/* An event's budget as resume reads it (1 to 100000 trials); `dflt` for any other value
 * (casting 1e999 to long is undefined and printed a negative budget). */
static long budget_of(const cJSON *ev, long dflt)
{
    double b = num(ev, "budget", -1);
    return b >= 1 && b <= 100000 ? (long)b : dflt;
}

/* Why `tune --resume` would refuse the journal at path, read into log (taken), in its words
 * (its file, line and field): the same reading of the session line, so that the list never
 * calls resumable what resume refuses, of the same reading of the file (it was read twice,
 * half of the listing's time). 0 when it would read it. */
static int resume_refusal(const char *path, JournalLog *log, char *why, size_t cap)
{
    TuneJournal *tj = tune_journal_new(NULL);
    TuneSetup setup;
    Error err;
    int rc = tj ? tune_journal_load_log(tj, path, log, &setup, &err)
                : error_set(&err, "out of memory");
    journal_log_clear(log); /* not taken without a TuneJournal */
    if (rc == 0)
        tune_setup_clear(&setup);
    else
        snprintf(why, cap, "%s", err.msg);
    tune_journal_free(tj);
    return rc;
}

static void summarize(const char *path, const char *id, Summary *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", id);
    s->best_s = -1;
    JournalLog log;
    Error err;
    if (journal_load(path, &log, &err) < 0) {
        snprintf(s->state, sizeof s->state, "unreadable: %s", err.msg);
        return;
    }
    s->problems = (int)log.n_problems;
    TrialMarks marks = {NULL, 0};
    const char *last = NULL;
    for (size_t i = 0; i < log.n; i++) {
        const cJSON *ev = log.events[i];
        const char *kind = str(ev, "event");
        last = kind;
        if (strcmp(kind, "session") == 0) {
            snprintf(s->created, sizeof s->created, "%s",
                     str(ev, "created") ? str(ev, "created") : "?");
            snprintf(s->optimizer, sizeof s->optimizer, "%s",
                     str(ev, "optimizer") ? str(ev, "optimizer") : "?");
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(ev, "cluster");
            if (str(ev, "sim"))
                snprintf(s->target, sizeof s->target, "sim %s", str(ev, "sim"));
            else
                snprintf(s->target, sizeof s->target, "%s", str(c, "name") ? str(c, "name") : "?");
            s->budget = budget_of(ev, 0);
        } else if (strcmp(kind, "resumed") == 0 || strcmp(kind, "ended") == 0 ||
                   strcmp(kind, "budget") == 0) {
            s->budget = budget_of(ev, s->budget); /* budget, ended: the console's :budget */
        } else if (strcmp(kind, "suggested") == 0) {
            unsigned char *m = mark_of(&marks, ev);
            if (!m || *m) {
                s->problems++;
                continue;
            }
            *m = 1;
            s->suggested++;
        } else if (strcmp(kind, "finished") == 0) {
            unsigned char *m = mark_of(&marks, ev);
            const char *status = str(ev, "status");
            double t = num(ev, "time_s", -1);
            if (!m || *m != 1 || !status_known(status) ||
                (strcmp(status, "ok") == 0 && !(t > 0))) {
                s->problems++;
                continue;
            }
            *m = 2;
            s->finished++;
            if (status && strcmp(status, "ok") == 0 && t >= 0) {
                s->ok++;
                if (s->best_s < 0 || t < s->best_s)
                    s->best_s = t;
            }
        }
    }
    char why[ERROR_MSG_MAX];
    int ended = last && strcmp(last, "ended") == 0;
    int stopped = ended && str(log.events[log.n - 1], "stopped");
    if (journal_in_use(path))
        snprintf(s->state, sizeof s->state, "running");
    else if (resume_refusal(path, &log, why, sizeof why) < 0)
        snprintf(s->state, sizeof s->state, "not resumable: %s", why);
    else if (ended)
        snprintf(s->state, sizeof s->state, "%s", stopped ? "stopped early" : "ended");
    else
        snprintf(s->state, sizeof s->state, "interrupted (resumable)");
    free(marks.state);
    journal_log_clear(&log);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_sessions(int argc, char **argv)
{
    static const struct option LONG[] = {
        {"json", no_argument, 0, 'J'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int json = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        if (c == 'J') {
            json = 1;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "tunedeck sessions: unknown option '%s' (try --help)\n",
                    argv[optind - 1]);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tunedeck sessions: unexpected argument '%s' (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    Error err;
    const char *dir = paths_sessions(&err);
    if (!dir) {
        fprintf(stderr, "tunedeck sessions: %s\n", err.msg);
        return EXIT_USAGE;
    }
    char **names = NULL;
    size_t n = 0;
    DIR *d = opendir(dir);
    /* Only a folder not made yet has no sessions: one that cannot be read (no permission, a
     * file in the path) said "no sessions" and exit 0, as if the journals were gone. */
    if (!d && errno != ENOENT) {
        fprintf(stderr, "tunedeck sessions: %s: cannot list the session journals: %s\n", dir,
                strerror(errno));
        return EXIT_FAILED;
    }
    if (d) {
        struct dirent *e;
        size_t ext = strlen(JOURNAL_EXT);
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len <= ext || strcmp(e->d_name + len - ext, JOURNAL_EXT) != 0)
                continue;
            char **grown = realloc(names, (n + 1) * sizeof *grown);
            if (!grown)
                break;
            names = grown;
            names[n++] = strndup(e->d_name, len - ext);
        }
        closedir(d);
    }
    if (n) /* qsort wants a real pointer even for nothing */
        qsort(names, n, sizeof *names, by_name);
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    if (!json && n == 0)
        printf("no sessions in %s\n", dir);
    else if (!json)
        table_row(stdout, "%-24s %-20s %-18s %-16s %7s %9s  %s", "id", "created", "target",
                  "optimizer", "trials", "best_s", "state");
    for (size_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s%s", dir, names[i], JOURNAL_EXT);
        Summary s;
        summarize(path, names[i], &s);
        char trials[32], best[32] = "-";
        snprintf(trials, sizeof trials, "%d/%ld", s.finished, s.budget);
        if (s.best_s >= 0)
            snprintf(best, sizeof best, "%.3f", s.best_s);
        /* The journal's strings and the file's name are outside text: never a terminal's
         * controls, and never bytes that are not UTF-8 (a name of any bytes but '/' made the
         * whole `--json` output invalid for a strict reader). Both forms show them alike. */
        char created[128], target[512], optimizer[256], state[sizeof s.state * 4];
        char id[sizeof s.id * 4], jpath[sizeof path * 4];
        termsafe(created, sizeof created, s.created);
        termsafe(target, sizeof target, s.target);
        termsafe(optimizer, sizeof optimizer, s.optimizer);
        termsafe(state, sizeof state, s.state);
        termsafe(id, sizeof id, s.id);
        termsafe(jpath, sizeof jpath, path);
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", id);
            cJSON_AddStringToObject(o, "journal", jpath);
            cJSON_AddStringToObject(o, "created", created);
            cJSON_AddStringToObject(o, "target", target);
            cJSON_AddStringToObject(o, "optimizer", optimizer);
            cJSON_AddNumberToObject(o, "budget", (double)s.budget);
            cJSON_AddNumberToObject(o, "trials", s.finished);
            cJSON_AddNumberToObject(o, "ok", s.ok);
            if (s.best_s >= 0)
                cJSON_AddNumberToObject(o, "best_time_s", s.best_s);
            else
                cJSON_AddNullToObject(o, "best_time_s");
            cJSON_AddStringToObject(o, "state", state);
            cJSON_AddNumberToObject(o, "problems", s.problems);
            cJSON_AddItemToArray(arr, o);
        } else {
            table_row(stdout, "%-24s %-20s %-18s %-16s %7s %9s  %s%s", id, created, target,
                      optimizer, trials, best, state, s.problems ? " (has skipped lines)" : "");
        }
        free(names[i]);
    }
    free(names);
    if (json) {
        char *text = jsonprint_text(arr, 1);
        puts(text);
        free(text);
        cJSON_Delete(arr);
    }
    return 0;
}
