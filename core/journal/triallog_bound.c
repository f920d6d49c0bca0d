/* The trial log's total bound (core/journal/triallog.h): the file an earlier run of the session
 * wrote, read back into its parts and its trials' counts, and the file rewritten without its
 * oldest parts when it would grow past the bound. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/journal/triallog_priv.h"

void triallog_parts_clear(TrialLog *l)
{
    for (size_t i = 0; i < l->n_parts; i++)
        free(l->parts[i].gone);
    l->n_parts = 0;
}

static LogPart *part_new(TrialLog *l, int trial, off_t off)
{
    if (l->n_parts == l->cap_parts) {
        size_t cap = l->cap_parts ? 2 * l->cap_parts : 64;
        LogPart *g = realloc(l->parts, cap * sizeof *g);
        if (!g)
            return NULL;
        l->parts = g;
        l->cap_parts = cap;
    }
    l->parts[l->n_parts] = (LogPart){.trial = trial, .off = off};
    return &l->parts[l->n_parts++];
}

int triallog_part_add(TrialLog *l, int trial, off_t off, size_t len)
{
    LogPart *p = l->n_parts ? &l->parts[l->n_parts - 1] : NULL;
    if (!p || p->trial != trial || p->trial == TRIALLOG_PART_NOTE)
        p = part_new(l, trial, off);
    if (!p) { /* out of memory: counted with the part before, never lost from the size */
        if (!l->n_parts)
            return -1;
        p = &l->parts[l->n_parts - 1];
    }
    p->bytes += len;
    return 0;
}

/* Grown by doubling: at 0, 4, 8, 16... entries (a power of two is full). */
static int gone_add(LogPart *p, int trial)
{
    size_t n = p->n_gone;
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        int *g = realloc(p->gone, (n ? 2 * n : 4) * sizeof *g);
        if (!g)
            return -1;
        p->gone = g;
    }
    p->gone[p->n_gone++] = trial;
    return 0;
}

/* "3-7, 9, 12" -> the trials of a note; returns where the list ended. */
static const char *parse_trials(const char *s, LogPart *p)
{
    for (;;) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0)
            return s;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a || b - a > 1000000)
                return s;
            s = end;
        }
        for (long t = a; t <= b; t++)
            if (gone_add(p, (int)t) < 0)
                return s;
        if (strncmp(s, ", ", 2) != 0)
            return s;
        s += 2;
    }
}

/* One line of the file read back, at `off`: which trial it is of, and what it says of it:
 * "TS trial N SOURCE STREAM: text" (a line it printed), "TS trial N: K lines (B bytes) left
 * out here" (its middle), "TS trial N ended: OUTCOME", "TS trials LIST left out here (K lines)"
 * (whole trials, the bound's note). Anything else stays with the part before it. */
static void read_line(TrialLog *l, const char *line, size_t len, off_t off)
{
    const char *sp = strchr(line, ' ');
    int trial = 0, known = 0;
    if (sp && strncmp(sp, " trials ", 8) == 0) {
        LogPart *p = part_new(l, TRIALLOG_PART_NOTE, off);
        if (!p)
            return;
        const char *rest = parse_trials(sp + 8, p);
        unsigned long lines = 0;
        if (sscanf(rest, " left out here (%lu line", &lines) == 1)
            p->gone_lines = lines;
        for (size_t i = 0; i < p->n_gone; i++) {
            TrialCount *c = triallog_count_of(l, p->gone[i], 1);
            if (c)
                c->left_out = 1;
        }
        p->bytes = len;
        return;
    }
    char *end = NULL;
    if (sp && strncmp(sp, " trial ", 7) == 0) {
        long t = strtol(sp + 7, &end, 10);
        if (end != sp + 7 && t >= 0 && t <= 1 << 30) {
            trial = (int)t;
            known = 1;
        }
    }
    if (!known) { /* not ours: with the part before, else a part of its own to drop */
        if (triallog_part_add(l, l->n_parts ? l->parts[l->n_parts - 1].trial : 0, off, len) < 0)
            return;
        return;
    }
    triallog_part_add(l, trial, off, len);
    TrialCount *c = triallog_count_of(l, trial, 1);
    if (!c)
        return;
    unsigned long left = 0;
    if (strncmp(end, " ended: ", 8) == 0) {
        c->ended = 1;
        c->failed = strncmp(end + 8, "ok", 2) != 0 && strncmp(end + 8, "pruned", 6) != 0;
    } else if (sscanf(end, ": %lu line", &left) == 1 && strstr(end, " left out here")) {
        c->lines += left;
    } else if (*end == ' ') {
        c->lines++;
    }
}

void triallog_read_back(TrialLog *l)
{
    int fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return; /* none yet; or one the first write refuses (a link) and says why */
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        !(f = fdopen(fd, "r"))) {
        close(fd);
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    off_t off = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        l->torn = line[n - 1] != '\n';
        if (!l->torn)
            line[n - 1] = 0;
        read_line(l, line, (size_t)n, off);
        off += n;
    }
    free(line);
    fclose(f);
    l->size = off;
    l->written = off > 0;
}

/* The parts of the file that stay, marked in keep[]: every part of the running trial; then,
 * newest first, whole trials while they fit in half of `target` (the latest, one stretch);
 * then the failed trials (and a killed run's, which never ended), newest first, while they
 * fit in `target`. */
static void plan(const TrialLog *l, char *keep, size_t target)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->n_parts; i++) {
        const LogPart *p = &l->parts[i];
        keep[i] = l->have_trial && p->trial == l->trial && p->trial != TRIALLOG_PART_NOTE;
        kept += keep[i] ? p->bytes : 0;
    }
    size_t i = l->n_parts;
    while (i-- > 0) {
        const LogPart *p = &l->parts[i];
        if (keep[i])
            continue;
        if (p->trial == TRIALLOG_PART_NOTE)
            continue; /* a note among the latest is merged into the next, if any */
        if (kept + p->bytes > target / 2)
            break;
        keep[i] = 1;
        kept += p->bytes;
    }
    for (size_t j = i + 1; j-- > 0;) {
        const LogPart *p = &l->parts[j];
        if (keep[j] || p->trial == TRIALLOG_PART_NOTE)
            continue;
        const TrialCount *c = triallog_count_of((TrialLog *)l, p->trial, 0);
        if ((!c || c->failed || !c->ended) && kept + p->bytes <= target) {
            keep[j] = 1;
            kept += p->bytes;
        }
    }
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorted, each once; returns the new length. */
static size_t sort_unique(int *a, size_t n)
{
    if (n < 2)
        return n; /* a may be NULL: qsort must not see it */
    qsort(a, n, sizeof *a, cmp_int);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || a[i] != a[k - 1])
            a[k++] = a[i];
    return k;
}

/* The note that stands where parts [from, to) were: their trials as ranges ("3-7, 9"), with
 * the lines they printed; those trials are marked left out. NULL in *out: out of memory. */
static size_t note_text(TrialLog *l, size_t from, size_t to, char **out)
{
    LogPart now = {.trial = TRIALLOG_PART_NOTE}, all = {.trial = TRIALLOG_PART_NOTE};
    size_t lines = 0;
    int oom = 0;
    *out = NULL;
    for (size_t i = from; i < to; i++) {
        const LogPart *p = &l->parts[i];
        if (p->trial != TRIALLOG_PART_NOTE) {
            oom |= gone_add(&now, p->trial) < 0;
            continue;
        }
        for (size_t k = 0; k < p->n_gone; k++) /* an earlier note's, merged */
            oom |= gone_add(&all, p->gone[k]) < 0;
        lines += p->gone_lines;
    }
    now.n_gone = sort_unique(now.gone, now.n_gone);
    for (size_t k = 0; k < now.n_gone; k++) { /* left out now: their lines, counted once */
        TrialCount *c = triallog_count_of(l, now.gone[k], 1);
        if (c) {
            lines += c->left_out ? 0 : c->lines;
            c->left_out = 1;
        }
        oom |= gone_add(&all, now.gone[k]) < 0;
    }
    free(now.gone);
    all.n_gone = sort_unique(all.gone, all.n_gone);
    size_t cap = 256 + 24 * all.n_gone, len;
    char *s = oom ? NULL : malloc(cap);
    if (!s) {
        free(all.gone);
        return 0;
    }
    len = triallog_stamp(s, cap, l->now);
    len += (size_t)snprintf(s + len, cap - len, " trials ");
    for (size_t k = 0; k < all.n_gone;) {
        size_t e = k;
        while (e + 1 < all.n_gone && all.gone[e + 1] == all.gone[e] + 1)
            e++;
        len += (size_t)snprintf(s + len, cap - len, "%s%d", k ? ", " : "", all.gone[k]);
        if (e != k)
            len += (size_t)snprintf(s + len, cap - len, "-%d", all.gone[e]);
        k = e + 1;
    }
    len += (size_t)snprintf(s + len, cap - len,
                            " left out here (%zu line%s): the log keeps at most %zu KiB, the "
                            "latest trials and the failed ones first\n",
                            lines, lines == 1 ? "" : "s", l->total_bytes >> 10);
    free(all.gone);
    *out = s;
    return len < cap ? len : cap - 1;
}

static int copy_range(int from, int to, off_t off, size_t bytes)
{
    char buf[1 << 16];
    while (bytes) {
        size_t want = bytes < sizeof buf ? bytes : sizeof buf;
        ssize_t n = pread(from, buf, want, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO; /* shorter than read back: not ours to guess */
            return -1;
        }
        for (ssize_t w = 0; w < n;) {
            ssize_t k = write(to, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                if (k == 0)
                    errno = ENOSPC;
                return -1;
            }
            w += k;
        }
        off += n;
        bytes -= (size_t)n;
    }
    return 0;
}

/* The kept parts copied, in order, to PATH.tmp, each stretch between them one note; the new
 * file renamed over the old. The parts are rebuilt to the new file's. */
static int rewrite(TrialLog *l, const char *keep, char *tmp, LogPart **new_parts,
                   size_t *new_n, off_t *new_size)
{
    int in = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0)
        return -1;
    unlink(tmp); /* a killed rewrite's */
    int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0) {
        close(in);
        return -1;
    }
    LogPart *np = calloc(l->n_parts + 1, sizeof *np);
    size_t nn = 0;
    off_t size = 0;
    int rc = np ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < l->n_parts;) {
        if (keep[i]) {
            rc = copy_range(in, out, l->parts[i].off, l->parts[i].bytes);
            np[nn++] = (LogPart){.trial = l->parts[i].trial, .off = size,
                                 .bytes = l->parts[i].bytes};
            size += (off_t)l->parts[i].bytes;
            i++;
            continue;
        }
        size_t j = i;
        while (j < l->n_parts && !keep[j])
            j++;
        char *note = NULL;
        size_t len = note_text(l, i, j, &note);
        LogPart *p = &np[nn];
        *p = (LogPart){.trial = TRIALLOG_PART_NOTE, .off = size, .bytes = len};
        if (!note) {
            rc = -1;
            errno = ENOMEM;
        } else {
            parse_trials(strstr(note, " trials ") + 8, p);
            const char *lp = strstr(note, " left out here (");
            unsigned long lines = 0;
            if (lp && sscanf(lp, " left out here (%lu", &lines) == 1)
                p->gone_lines = lines;
            ssize_t w = write(out, note, len);
            if (w != (ssize_t)len) {
                if (w >= 0)
                    errno = ENOSPC;
                rc = -1;
            }
        }
        free(note);
        nn++;
        size += (off_t)len;
        i = j;
    }
    /* The new file's lines are on disk before its name replaces the old file's: renamed
     * first, a power loss could leave the log empty (a file system that does not order the
     * data before the rename, as ext4's auto_da_alloc does, may). */
    if (rc == 0 && fsync(out) < 0)
        rc = -1;
    int e = errno;
    close(in);
    if (rc == 0 && rename(tmp, l->path) < 0) {
        e = errno;
        rc = -1;
    }
    if (rc < 0) {
        close(out);
        unlink(tmp);
        if (np)
            for (size_t k = 0; k < nn; k++)
                free(np[k].gone);
        free(np);
        errno = e;
        return -1;
    }
    close(l->fd);
    l->fd = out;
    *new_parts = np;
    *new_n = nn;
    *new_size = size;
    return 0;
}

int triallog_bound(TrialLog *l, size_t incoming)
{
    if ((size_t)l->size + incoming <= l->total_bytes)
        return 0;
    /* Down to three quarters: a rewrite comes once per quarter of the bound written. */
    size_t target = l->total_bytes / 4 * 3;
    target = target > incoming ? target - incoming : 0;
    char *keep = calloc(l->n_parts + 1, 1);
    char tmp[sizeof l->path + 8];
    if (!keep || snprintf(tmp, sizeof tmp, "%s.tmp", l->path) >= (int)sizeof tmp) {
        free(keep);
        triallog_fail(l, "cannot keep it under its bound", ENOMEM);
        return -1;
    }
    plan(l, keep, target);
    LogPart *np = NULL;
    size_t nn = 0;
    off_t size = 0;
    if (rewrite(l, keep, tmp, &np, &nn, &size) < 0) {
        free(keep);
        triallog_fail(l, "cannot rewrite it under its bound", errno);
        return -1;
    }
    free(keep);
    size_t old_n = l->n_parts;
    triallog_parts_clear(l);
    free(l->parts);
    l->cap_parts = old_n + 1; /* what rewrite allocated */
    l->parts = np;
    l->n_parts = nn;
    l->size = size;
    return 0;
}
