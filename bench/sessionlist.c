/* bench/sessionlist: what `tunedeck sessions` spends summarizing each journal, at 400
 * journals of 300 trials (the operator scale the listing was measured at): every event
 * parsed and held before it is summarized (before, journal_load) against one pass that keeps
 * none but the first (journal_scan), both in this run on the same files, which must be
 * summarized alike or it fails. The journals are written from a real one
 * (tests/fixtures/journals/a-alexnet-resumed.jsonl: its trials' lines repeated, numbered on)
 * into a temporary folder, removed at the end. Prints the CPU seconds of each way and the
 * ratio. Usage: sessionlist [--out FILE.json] [--quick]  (--quick: 40 journals) */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/args/benchargs.h"
#include "bench/args/journalwhole.h"
#include "cmd/session_summary.h"
#include "core/base/clock.h"
#include "core/base/jsonfile.h"
#include "core/base/readall.h"

enum { TRIALS = 300, JOURNALS = 400, QUICK_JOURNALS = 40 };

/* The fixture's line of `kind` for trial k (1-based), or NULL. */
static const char *find_line(const char *text, const char *kind, int k, size_t *len)
{
    char head[96];
    int hl = snprintf(head, sizeof head, "{\"event\":\"%s\",\"trial\":%d,", kind, k);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            return NULL;
        if (strncmp(p, head, (size_t)hl) == 0) {
            *len = (size_t)(nl - p) + 1;
            return p;
        }
        p = nl + 1;
    }
    return NULL;
}

/* One journal: the fixture's session line, then TRIALS trials' suggested, started and
 * finished lines (the fixture's ten in turn, numbered on), then an ended line. */
static int write_journal(FILE *f, const char *text, int n_fixture)
{
    const char *nl = strchr(text, '\n');
    if (!nl)
        return -1;
    fwrite(text, 1, (size_t)(nl - text) + 1, f);
    static const char *KINDS[] = {"suggested", "started", "finished"};
    for (int t = 1; t <= TRIALS; t++)
        for (int k = 0; k < 3; k++) {
            size_t len;
            const char *l = find_line(text, KINDS[k], (t - 1) % n_fixture + 1, &len);
            if (!l)
                return -1;
            const char *rest = strchr(strstr(l, "\"trial\":"), ',');
            fprintf(f, "{\"event\":\"%s\",\"trial\":%d", KINDS[k], t);
            fwrite(rest, 1, len - (size_t)(rest - l), f);
        }
    fprintf(f, "{\"event\":\"ended\",\"wall_s\":1795791151,\"trials\":%d,\"budget\":%d}\n", TRIALS,
            TRIALS);
    return ferror(f) ? -1 : 0;
}

static int same(const SessionSummary *a, const SessionSummary *b)
{
    return strcmp(a->state, b->state) == 0 && strcmp(a->target, b->target) == 0 &&
           a->finished == b->finished && a->ok == b->ok && a->problems == b->problems &&
           a->budget == b->budget && a->resume_budget == b->resume_budget && a->best_s == b->best_s;
}

int main(int argc, char **argv)
{
    const char *out;
    int quick;
    if (benchargs_out_quick("sessionlist", argc, argv, &out, &quick) < 0)
        return 2;
    const char *home = getenv("TUNEDECK_HOME");
    char fx[4096];
    snprintf(fx, sizeof fx, "%s/tests/fixtures/journals/a-alexnet-resumed.jsonl",
             home && *home ? home : ".");
    Error e;
    size_t flen;
    char *text = readall_file(fx, 1 << 20, &flen, &e);
    if (!text) {
        fprintf(stderr, "sessionlist: %s (run from the source tree, or set TUNEDECK_HOME)\n",
                e.msg);
        return 1;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/tunedeck-sessionlist-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "sessionlist: %s: cannot make a folder\n", dir);
        free(text);
        return 1;
    }
    int n = quick ? QUICK_JOURNALS : JOURNALS, rc = 0;
    char path[4400];
    long bytes = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/s%03d.jsonl", dir, i);
        FILE *f = fopen(path, "w");
        if (!f || write_journal(f, text, 10) < 0) {
            fprintf(stderr, "sessionlist: %s: cannot write the journal\n", path);
            rc = 1;
        }
        if (f) {
            bytes += ftell(f);
            fclose(f);
        }
        chmod(path, 0600);
    }
    SessionSummary *before = calloc((size_t)n, sizeof *before);
    SessionSummary *now = calloc((size_t)n, sizeof *now);
    double b = 0, w = 0;
    if (rc == 0 && before && now) {
        double t0 = clock_cpu_s();
        for (int i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/s%03d.jsonl", dir, i);
            session_summary_read_by(path, "s", &before[i], journalwhole_read);
        }
        double t1 = clock_cpu_s();
        for (int i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/s%03d.jsonl", dir, i);
            session_summary_read(path, "s", &now[i]);
        }
        b = t1 - t0;
        w = clock_cpu_s() - t1;
        for (int i = 0; i < n && rc == 0; i++)
            if (!same(&before[i], &now[i]) || now[i].finished != TRIALS) {
                fprintf(stderr, "sessionlist: journal %d: the two summaries differ (%s; %s)\n", i,
                        before[i].state, now[i].state);
                rc = 1;
            }
        printf("summaries of %d journals of %d trials (%.0f MB), CPU\n"
               "%12s %12s %8s\n%12.3f %12.3f %8.2f\n",
               n, TRIALS, (double)bytes / 1e6, "before_s", "now_s", "ratio", b, w,
               w > 0 ? b / w : 0);
    } else if (rc == 0) {
        fprintf(stderr, "sessionlist: out of memory\n");
        rc = 1;
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/s%03d.jsonl", dir, i);
        unlink(path);
    }
    rmdir(dir);
    if (rc == 0 && out) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "bench", "sessionlist");
        cJSON_AddNumberToObject(doc, "journals", n);
        cJSON_AddNumberToObject(doc, "trials", TRIALS);
        cJSON_AddNumberToObject(doc, "bytes", (double)bytes);
        cJSON_AddNumberToObject(doc, "before_s", b);
        cJSON_AddNumberToObject(doc, "now_s", w);
        cJSON_AddNumberToObject(doc, "ratio", w > 0 ? b / w : 0);
        if (jsonfile_write(out, doc, &e) < 0) {
            fprintf(stderr, "sessionlist: %s\n", e.msg);
            rc = 1;
        }
        cJSON_Delete(doc);
    }
    free(before);
    free(now);
    free(text);
    return rc;
}
