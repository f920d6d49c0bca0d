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
#include "cmd/session_summary.h"
#include "core/base/exitcode.h"
#include "core/journal/journal.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: tunedeck sessions [--json]\n"
                 "Lists the session journals ($TUNEDECK_STATE_DIR/sessions, else\n"
                 "$XDG_STATE_HOME/tunedeck/sessions, else ~/.local/state/tunedeck/sessions).\n"
                 "Resume one with `tunedeck tune --resume ID`.\n");
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
        SessionSummary s;
        session_summary_read(path, names[i], &s);
        char trials[32], best[32] = "-";
        snprintf(trials, sizeof trials, "%d/%ld", s.finished,
                 s.resume_budget ? s.resume_budget : s.budget);
        if (s.best_s >= 0)
            snprintf(best, sizeof best, "%.3f", s.best_s);
        /* The journal's strings and the file's name are outside text: never a terminal's
         * controls, and never bytes that are not UTF-8 (a name of any bytes but '/' made the
         * whole `--json` output invalid for a strict reader). Both forms show them alike. */
        char created[128], target[512], optimizer[256], state[sizeof s.state * 4];
        char id[sizeof s.id * 4], jpath[sizeof path * 4], problem[sizeof s.first_problem * 4];
        termsafe(created, sizeof created, s.created);
        termsafe(target, sizeof target, s.target);
        termsafe(optimizer, sizeof optimizer, s.optimizer);
        termsafe(state, sizeof state, s.state);
        termsafe(id, sizeof id, s.id);
        termsafe(jpath, sizeof jpath, path);
        termsafe(problem, sizeof problem, s.first_problem);
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", id);
            cJSON_AddStringToObject(o, "journal", jpath);
            cJSON_AddStringToObject(o, "created", created);
            cJSON_AddStringToObject(o, "target", target);
            cJSON_AddStringToObject(o, "optimizer", optimizer);
            cJSON_AddNumberToObject(o, "budget", (double)s.budget);
            if (s.resume_budget)
                cJSON_AddNumberToObject(o, "resume_budget", (double)s.resume_budget);
            else
                cJSON_AddNullToObject(o, "resume_budget");
            cJSON_AddNumberToObject(o, "trials", s.finished);
            cJSON_AddNumberToObject(o, "ok", s.ok);
            if (s.best_s >= 0)
                cJSON_AddNumberToObject(o, "best_time_s", s.best_s);
            else
                cJSON_AddNullToObject(o, "best_time_s");
            cJSON_AddStringToObject(o, "state", state);
            cJSON_AddNumberToObject(o, "problems", s.problems);
            if (s.first_problem[0])
                cJSON_AddStringToObject(o, "first_problem", problem);
            else
                cJSON_AddNullToObject(o, "first_problem");
            cJSON_AddItemToArray(arr, o);
        } else {
            /* the first skipped line and why, as the resume will say it (the file is the
             * row's: its line number is enough) */
            char skipped[sizeof problem + 64] = "";
            const char *first = problem;
            size_t at = strlen(jpath);
            if (strncmp(problem, jpath, at) == 0 && problem[at] == ':')
                first = problem + at + 1;
            /* a state "not resumable: ..." may be that line's own words already */
            if (s.problems && s.first_problem_line && !strstr(state, first))
                snprintf(skipped, sizeof skipped, " (has skipped lines; the first: line %s)",
                         first);
            else if (s.problems)
                snprintf(skipped, sizeof skipped, " (has skipped lines)");
            table_row(stdout, "%-24s %-20s %-18s %-16s %7s %9s  %s%s", id, created, target,
                      optimizer, trials, best, state, skipped);
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
