/* The live jobs' folders on SSH hosts, checked ours and no one else's to write before the run
 * (remote/live/jobdir.h): a walk of the path on each host, in one command, judged here. */
#include "remote/live/jobdir.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/base/termsafe.h"
#include "remote/ssh/rexec.h"
#include "remote/ssh/shquote.h"

/* The walk, as the kernel walks a path: component by component from /, each link's target
 * put in its place (a relative one from the folder the link is in), `..` the physical parent,
 * so every folder a name is looked up in is listed, including those inside a link's target
 * that the final path leaves out. ls -ldn (POSIX: the mode string and the numeric owner) and
 * not stat -c, which BSD's and older busyboxes' stat lack. A folder not there yet ends the
 * walk: the job's start makes it (mkdir -p, ours). Globbing is off: a path is split, never
 * expanded. The login folder stands for a relative DIR, as it does for the job's mkdir. */
static const char SCRIPT[] =
    "set -f; LC_ALL=C; export LC_ALL\n"
    "say() { printf '%s\\n' \"$*\"; }\n"
    "stop() { say \"e $*\"; say end; exit 0; }\n"
    "entry() {\n"
    "    l=$(ls -ldn -- \"$2\" 2>/dev/null) || stop \"cannot list $2\"\n"
    "    set -- \"$1\" \"$2\" $l\n"
    "    say \"$1 $3 $5 $2\"\n"
    "}\n"
    "walk() {\n"
    "    rest=$1 hops=0 lastkind=\n"
    "    while [ -n \"$rest\" ]; do\n"
    "        case $rest in */*) c=${rest%%/*} rest=${rest#*/} ;; *) c=$rest rest= ;; esac\n"
    "        case $c in ''|.) continue ;; ..) cur=${cur%/*}; cur=${cur:-/}; continue ;; esac\n"
    "        p=${cur%/}/$c\n"
    "        if [ -h \"$p\" ]; then\n"
    "            hops=$((hops + 1))\n"
    "            [ $hops -le 40 ] || stop \"more than 40 links on the way, at $p\"\n"
    "            entry l \"$p\"\n"
    "            t=$(readlink -- \"$p\") || stop \"cannot read the link $p\"\n"
    "            case $t in /*) cur=/ ;; esac\n"
    "            rest=$t${rest:+/$rest}\n"
    "        elif [ -e \"$p\" ]; then\n"
    "            if [ -n \"$rest\" ]; then lastkind=d; else lastkind=$2; fi\n"
    "            entry $lastkind \"$p\"\n"
    "            [ -d \"$p\" ] || return 1\n"
    "            cur=$p\n"
    "        else\n"
    "            say \"n $p\"\n"
    "            return 1\n"
    "        fi\n"
    "    done\n"
    "}\n"
    "u=$(id -u) || stop 'id -u failed'\n"
    "say \"uid $u\"\n"
    "dir=$1; shift\n"
    "case $dir in /*) ;; *) b=$(pwd -P) || stop 'cannot read the login folder'; dir=$b/$dir ;; "
    "esac\n"
    "cur=/\n"
    "entry d /\n"
    "if walk \"${dir#/}\" t; then\n"
    "    top=$cur\n"
    "    for name; do\n"
    "        cur=$top\n"
    "        if walk \"$name\" j; then [ \"$lastkind\" = j ] || entry j \"$cur\"; fi\n"
    "    done\n"
    "fi\n"
    "say end\n";

char *jobdir_command(const char *job_dir, const char *const *names, size_t n, Error *err)
{
    char *b = NULL;
    size_t len = 0;
    /* one append after another: `|` between calls would leave their order unspecified */
    int rc = shquote_append_raw(&b, &len, "sh -c ");
    rc |= shquote_append(&b, &len, SCRIPT);
    rc |= shquote_append_raw(&b, &len, " tunedeck-jobdir ");
    rc |= shquote_append(&b, &len, job_dir);
    for (size_t i = 0; i < n; i++) {
        rc |= shquote_append_raw(&b, &len, " ");
        rc |= shquote_append(&b, &len, names[i]);
    }
    if (rc) {
        free(b);
        error_no_memory(err, "job folder check");
        return NULL;
    }
    return b;
}

/* `ls -l`'s mode string ("drwxrwxrwt", perhaps "+" or "." after it for an ACL or a security
 * context) as its type letter and mode bits (07777); -1 for anything else. */
static int mode_parse(const char *s, char *type, unsigned *mode)
{
    static const char *const allowed[9] = {"r-", "w-", "xsS-", "r-", "w-", "xsS-",
                                           "r-", "w-", "xtT-"};
    size_t n = strlen(s);
    if ((n != 10 && n != 11) || !strchr("-dlbcps", s[0]) || (n == 11 && !strchr("+.@", s[10])))
        return -1;
    unsigned m = 0;
    for (int i = 0; i < 9; i++) {
        char c = s[1 + i];
        if (!strchr(allowed[i], c))
            return -1;
        if (c != '-' && c != 'S' && c != 'T')
            m |= 0400u >> i; /* r, w, x, s, t: the bit is set */
        if (c == 's' || c == 'S' || c == 't' || c == 'T')
            m |= i == 2 ? 04000u : i == 5 ? 02000u : 01000u;
    }
    *type = s[0];
    *mode = m;
    return 0;
}

static int bad_answer(const char *host, const char *line, Error *err)
{
    char shown[160];
    termsafe(shown, sizeof shown, line);
    error_set(err,
              "%s: the job folder check answered '%s', not a line of its own (the host needs a "
              "POSIX sh, ls -ldn and readlink)",
              host, shown);
    return error_mark(err, ERROR_REMOTE);
}

static int refused(Error *err)
{
    return error_mark(err, ERROR_INPUT);
}

/* One "KIND MODE UID PATH" line, judged: a folder on the way (d), --job-dir's own (t) and a
 * link on the way (l) are the remote user's or root's, a folder no one else can write unless
 * sticky (as liverun_slurm_folder.c allows above a job's folder); the job's own folder (j)
 * is the user's, and no one else's to write, as on Slurm. */
static int judge_entry(const char *host, const char *dir, unsigned me, const char *line,
                       Error *err)
{
    char kind, mstr[16], type;
    unsigned uid, mode;
    int off = 0;
    if (sscanf(line, "%c %15s %u %n", &kind, mstr, &uid, &off) != 3 || off == 0 ||
        line[off] != '/' || !strchr("dtlj", kind) || line[1] != ' ' || line[2] != mstr[0] ||
        strncmp(line + 2 + strlen(mstr), " ", 1) != 0 ||
        !isdigit((unsigned char)line[3 + strlen(mstr)]) || mode_parse(mstr, &type, &mode) < 0)
        return bad_answer(host, line, err);
    const char *path = line + off;
    char p[256];
    termsafe(p, sizeof p, path);
    const char *what = kind == 'j'   ? "the job folder"
                       : kind == 'l' ? "the link"
                       : kind == 't' ? "the --job-dir folder"
                                     : "the folder";
    char where[300] = "";
    if (kind == 'd' || kind == 'l')
        snprintf(where, sizeof where, " on the way to --job-dir %s", dir);
    if (kind == 'j' && type != 'd')
        return bad_answer(host, line, err);
    if (kind == 'l' && type != 'l')
        return bad_answer(host, line, err);
    if ((kind == 'd' || kind == 't') && type != 'd') {
        error_set(err, "%s: %s%s is not a folder (ls says '%c'): the job folders cannot be there",
                  host, p, where, type);
        return refused(err);
    }
    if (uid != me && (kind == 'j' || uid != 0)) {
        error_set(err,
                  "%s: %s %s%s belongs to uid %u, not to you (uid %u)%s: refused, its owner "
                  "could %s; use a folder of your own (--job-dir)",
                  host, what, p, where, uid, me, kind == 'j' ? "" : " or root",
                  kind == 'l' ? "point it elsewhere" : "swap the jobs' hostfiles and checkpoints");
        return refused(err);
    }
    int sticky_ok = (kind == 'd' || kind == 't') && (mode & 01000);
    if (kind != 'l' && (mode & 022) && !sticky_ok) {
        error_set(err,
                  "%s: %s %s%s is %s (mode %04o); expected no group/other write%s: chmod go-w "
                  "%s (anyone who can write it could swap the jobs' folders, hostfiles and "
                  "checkpoints)",
                  host, what, p, where, mode & 002 ? "world-writable" : "group-writable", mode,
                  kind != 'j' ? " (or the sticky bit, like /tmp)" : "", p);
        return refused(err);
    }
    return 0;
}

int jobdir_judge(const char *host, const char *job_dir, const char *answer, Error *err)
{
    char *copy = strdup(answer);
    if (!copy)
        return error_no_memory(err, "%s: job folder check", host);
    unsigned me = 0;
    int rc = 0, seen_uid = 0, seen_end = 0;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line && rc == 0;
         line = strtok_r(NULL, "\n", &save)) {
        int off = 0;
        if (seen_end) {
            rc = bad_answer(host, line, err); /* nothing after the end */
        } else if (!seen_uid) {
            rc = sscanf(line, "uid %u%n", &me, &off) == 1 && line[off] == 0 &&
                         strspn(line + 4, "0123456789") == strlen(line + 4)
                     ? (seen_uid = 1, 0)
                     : bad_answer(host, line, err);
        } else if (!strcmp(line, "end")) {
            seen_end = 1;
        } else if (!strncmp(line, "n /", 3)) {
            continue; /* not there yet: made by the job's start, ours */
        } else if (!strncmp(line, "e ", 2)) {
            char why[300];
            termsafe(why, sizeof why, line + 2);
            error_set(err, "%s: cannot check --job-dir %s: %s", host, job_dir, why);
            rc = refused(err);
        } else {
            rc = judge_entry(host, job_dir, me, line, err);
        }
    }
    if (rc == 0 && !seen_end)
        rc = bad_answer(host, seen_uid ? "(cut short: no end line)" : answer, err);
    free(copy);
    return rc;
}

/* ---- one host's check, and every ready host's ---- */

enum { ANSWER_MAX = 1 << 20 };

struct JobdirProbe {
    RemoteExec *x;
    char *out; /* its standard output, lines joined by '\n' */
    size_t len;
    int too_long;
    char err_line[200]; /* its first line on stderr */
    int64_t began_ms;
};

static void on_line(void *userdata, RemoteExec *x, StreamKind stream, const char *line,
                    int truncated)
{
    (void)x;
    JobdirProbe *pr = userdata;
    if (stream != STREAM_STDOUT) {
        if (!pr->err_line[0])
            termsafe(pr->err_line, sizeof pr->err_line, line);
        return;
    }
    size_t n = strlen(line);
    char *grown = truncated || pr->len + n + 2 > ANSWER_MAX ? NULL
                                                             : realloc(pr->out, pr->len + n + 2);
    if (!grown) {
        pr->too_long = 1;
        return;
    }
    pr->out = grown;
    memcpy(pr->out + pr->len, line, n);
    pr->len += n;
    pr->out[pr->len++] = '\n';
    pr->out[pr->len] = 0;
}

JobdirProbe *jobdir_probe_begin(HostPool *p, size_t host, const char *command, Error *err)
{
    JobdirProbe *pr = calloc(1, sizeof *pr);
    if (!pr) {
        error_no_memory(err, "job folder check");
        return NULL;
    }
    pr->began_ms = clock_now_ms();
    ExecOptions eo = {.on_line = on_line, .userdata = pr, .max_line = 8192};
    if (!(pr->x = hostpool_exec(p, host, command, NULL, 0, &eo, err))) {
        HostInfo hi;
        hostpool_info(p, host, &hi);
        error_prefix(err, "%s: the job folder check", hi.name);
        error_mark(err, ERROR_REMOTE);
        free(pr);
        return NULL;
    }
    return pr;
}

int jobdir_probe_done(const JobdirProbe *pr)
{
    return rexec_done(pr->x);
}

int64_t jobdir_probe_began_ms(const JobdirProbe *pr)
{
    return pr->began_ms;
}

/* One host's outcome: its answer judged, or why there is none. */
static int verdict(const JobdirProbe *pr, const char *host, const char *job_dir, Error *err)
{
    if (!rexec_done(pr->x)) {
        error_set(err, "%s: the job folder check got no answer within %.0f s", host,
                  (double)(clock_now_ms() - pr->began_ms) / 1000);
        return error_mark(err, ERROR_REMOTE);
    }
    if (rexec_outcome(pr->x) != EXEC_EXITED) {
        error_set(err, "%s: the job folder check failed: %s", host, rexec_error(pr->x));
        return error_mark(err, ERROR_REMOTE);
    }
    if (pr->too_long)
        return bad_answer(host, "(more than 1 MiB, or a line cut short)", err);
    if (rexec_exit_status(pr->x) != 0) {
        error_set(err, "%s: the job folder check exited %d%s%s", host,
                  rexec_exit_status(pr->x), pr->err_line[0] ? ": " : "", pr->err_line);
        return error_mark(err, ERROR_REMOTE);
    }
    return jobdir_judge(host, job_dir, pr->out ? pr->out : "", err);
}

int jobdir_probe_end(JobdirProbe *pr, const char *host, const char *job_dir, Error *err)
{
    if (!pr)
        return 0;
    int rc = verdict(pr, host, job_dir, err);
    rexec_free(pr->x);
    free(pr->out);
    free(pr);
    return rc;
}

typedef struct {
    JobdirProbe **probes;
    size_t n;
} Probes;

static int all_answered(void *ctx)
{
    const Probes *ps = ctx;
    for (size_t i = 0; i < ps->n; i++)
        if (ps->probes[i] && !jobdir_probe_done(ps->probes[i]))
            return 0;
    return 1;
}

int jobdir_check_hosts(HostPool *p, const char *job_dir, const char *const *names, size_t n,
                       double timeout_s, unsigned char *checked, Error *err)
{
    size_t hosts = hostpool_size(p);
    char *cmd = jobdir_command(job_dir, names, n, err);
    Probes ps = {.probes = calloc(hosts ? hosts : 1, sizeof *ps.probes), .n = hosts};
    if (!cmd || !ps.probes) {
        free(cmd);
        free(ps.probes);
        return error_no_memory(err, "job folder check");
    }
    int rc = 0;
    for (size_t h = 0; h < hosts && rc == 0; h++) {
        HostInfo hi;
        hostpool_info(p, h, &hi);
        if (hi.state == HOST_READY && !(ps.probes[h] = jobdir_probe_begin(p, h, cmd, err)))
            rc = -1; /* one not ready is drained: no job goes there until it is checked */
    }
    free(cmd);
    if (rc == 0) {
        EvLoop *loop = evloop_new();
        if (loop && hostpool_attach(p, loop) > 0)
            evloop_run(loop, all_answered, &ps, clock_now_ms() + (int64_t)(timeout_s * 1000));
        evloop_free(loop);
    }
    for (size_t h = 0; h < hosts; h++) {
        if (!ps.probes[h])
            continue;
        HostInfo hi;
        hostpool_info(p, h, &hi);
        Error e;
        int ok = jobdir_probe_end(ps.probes[h], hi.name, job_dir, &e) == 0;
        if (!ok && rc == 0) { /* the first host's refusal, in the pool's order */
            *err = e;
            rc = -1;
        }
        if (checked)
            checked[h] = (unsigned char)ok;
    }
    free(ps.probes);
    return rc;
}
