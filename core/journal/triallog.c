/* The trials' own output beside the journal (core/journal/triallog.h). */
#include "core/journal/triallog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/termsafe.h"
#include "core/journal/journal.h"
#include "core/journal/triallog_priv.h"

TrialLog *triallog_new(const char *journal_path)
{
    TrialLog *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->fd = -1;
    l->total_bytes = TRIALLOG_TOTAL_BYTES;
    size_t len = strlen(journal_path), ext = strlen(JOURNAL_EXT);
    if (len > ext && strcmp(journal_path + len - ext, JOURNAL_EXT) == 0)
        len -= ext;
    if (snprintf(l->path, sizeof l->path, "%.*s%s", (int)len, journal_path, TRIALLOG_EXT) >=
        (int)sizeof l->path) {
        l->failed = 1;
        snprintf(l->error, sizeof l->error, "%s...: path too long", TRIALLOG_EXT);
        return l;
    }
    triallog_read_back(l);
    return l;
}

void triallog_set_total(TrialLog *l, size_t total_bytes)
{
    l->total_bytes = total_bytes < TRIALLOG_TOTAL_MIN ? TRIALLOG_TOTAL_MIN : total_bytes;
}

static void tail_clear(TrialLog *l)
{
    for (size_t i = l->tail_first; i < l->tail_first + l->tail_n; i++)
        free(l->tail[i]);
    l->tail_first = l->tail_n = l->tail_bytes = 0;
}

void triallog_free(TrialLog *l)
{
    if (!l)
        return;
    tail_clear(l);
    free(l->tail);
    free(l->counts);
    triallog_parts_clear(l);
    free(l->parts);
    if (l->fd >= 0)
        close(l->fd);
    free(l);
}

const char *triallog_path(const TrialLog *l)
{
    return l->path;
}

int triallog_written(const TrialLog *l)
{
    return l->written;
}

const char *triallog_error(const TrialLog *l)
{
    return l->failed ? l->error : NULL;
}

void triallog_fail(TrialLog *l, const char *what, int e)
{
    l->failed = 1;
    snprintf(l->error, sizeof l->error, "%s: %s: %s", l->path, what, strerror(e));
}

/* Created with the first line, like the journal: 0600 whatever the umask, never through a
 * link, and only a regular file of ours is appended to. */
static int ensure_open(TrialLog *l)
{
    if (l->fd >= 0)
        return 0;
    if (l->failed)
        return -1;
    int fd = open(l->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        triallog_fail(l, "cannot open to append", errno);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        l->failed = 1;
        snprintf(l->error, sizeof l->error, "%s: expected a regular file of this user", l->path);
        return -1;
    }
    if (st.st_mode & 077)
        fchmod(fd, 0600);
    l->fd = fd;
    l->size = st.st_size;
    return 0;
}

static int write_all(TrialLog *l, const char *text, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(l->fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            /* what part of the line went is cut off again: the file ends with a whole line,
             * as the journal's does (when even that fails, a resume ends the half line) */
            if (off && ftruncate(l->fd, l->size) < 0)
                l->torn = 1;
            triallog_fail(l, "cannot write", e);
            return -1;
        }
        off += (size_t)n;
    }
    return 0;
}

/* One whole line per write(2), so a reader never meets half a line of ours mid-file. The
 * file is first brought under its total bound, if this line would take it past. */
static void put(TrialLog *l, const char *line, size_t len)
{
    if (ensure_open(l) < 0)
        return;
    if (l->torn) { /* a killed run's half line ends here, not in ours */
        if (write_all(l, "\n", 1) < 0)
            return;
        l->torn = 0;
        l->size++;
        if (l->n_parts)
            l->parts[l->n_parts - 1].bytes++;
    }
    if (triallog_bound(l, len) < 0 || write_all(l, line, len) < 0)
        return;
    triallog_part_add(l, l->trial, l->size, len);
    l->size += (off_t)len;
    l->written = 1;
}

size_t triallog_stamp(char *out, size_t cap, time_t now)
{
    struct tm tm;
    if (!gmtime_r(&now, &tm))
        memset(&tm, 0, sizeof tm);
    return strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Kept in trial order, found by bisection: a long session read back, or a rewrite naming
 * thousands of trials left out, looks up every one of them. Trials come in order, so an
 * insertion is nearly always at the end. */
TrialCount *triallog_count_of(TrialLog *l, int trial, int add)
{
    size_t lo = 0, hi = l->n_counts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->counts[mid].trial < trial)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->n_counts && l->counts[lo].trial == trial)
        return &l->counts[lo];
    if (!add)
        return NULL;
    if (l->n_counts == l->cap_counts) {
        size_t cap = l->cap_counts ? 2 * l->cap_counts : 16;
        TrialCount *g = realloc(l->counts, cap * sizeof *g);
        if (!g)
            return NULL;
        l->counts = g;
        l->cap_counts = cap;
    }
    memmove(&l->counts[lo + 1], &l->counts[lo], (l->n_counts - lo) * sizeof *l->counts);
    l->n_counts++;
    l->counts[lo] = (TrialCount){.trial = trial};
    return &l->counts[lo];
}

size_t triallog_count(const TrialLog *l, int trial)
{
    TrialCount *c = triallog_count_of((TrialLog *)l, trial, 0);
    return c && !c->left_out ? c->lines : 0;
}

int triallog_left_out(const TrialLog *l, int trial)
{
    TrialCount *c = triallog_count_of((TrialLog *)l, trial, 0);
    return c && c->left_out;
}

/* The current trial's held tail, after a note of what was left out before it. */
static void flush_tail(TrialLog *l, time_t now)
{
    if (l->left_lines) {
        char ts[32], note[256];
        triallog_stamp(ts, sizeof ts, now);
        int n = snprintf(note, sizeof note,
                         "%s trial %d: %zu line%s (%zu bytes) left out here: the log keeps each "
                         "trial's first %d and last %d KiB\n",
                         ts, l->trial, l->left_lines, l->left_lines == 1 ? "" : "s",
                         l->left_bytes, TRIALLOG_HEAD_BYTES >> 10, TRIALLOG_TAIL_BYTES >> 10);
        put(l, note, (size_t)n < sizeof note ? (size_t)n : sizeof note - 1);
    }
    for (size_t i = l->tail_first; i < l->tail_first + l->tail_n; i++)
        put(l, l->tail[i], strlen(l->tail[i]));
    tail_clear(l);
    l->left_lines = l->left_bytes = 0;
}

/* A line past the head is held; the oldest held ones go once the tail is over its size. */
static void hold(TrialLog *l, char *line, size_t len)
{
    if (l->tail_first + l->tail_n == l->tail_cap) {
        if (l->tail_first) { /* room at the front: move the held lines down */
            memmove(l->tail, l->tail + l->tail_first, l->tail_n * sizeof *l->tail);
            l->tail_first = 0;
        } else {
            size_t cap = l->tail_cap ? 2 * l->tail_cap : 64;
            char **g = realloc(l->tail, cap * sizeof *g);
            if (!g) { /* out of memory: the line is left out, as an old one would be */
                l->left_lines++;
                l->left_bytes += len;
                free(line);
                return;
            }
            l->tail = g;
            l->tail_cap = cap;
        }
    }
    l->tail[l->tail_first + l->tail_n++] = line;
    l->tail_bytes += len;
    while (l->tail_bytes > TRIALLOG_TAIL_BYTES && l->tail_n > 1) {
        char *old = l->tail[l->tail_first++];
        l->tail_n--;
        size_t olen = strlen(old);
        l->tail_bytes -= olen;
        l->left_lines++;
        l->left_bytes += olen;
        free(old);
    }
}

void triallog_line(TrialLog *l, int trial, const char *source, const char *stream,
                   const char *text, time_t now)
{
    l->now = now;
    if (!l->have_trial || trial != l->trial) {
        if (l->have_trial && !l->ended)
            flush_tail(l, now);
        l->trial = trial;
        l->have_trial = 1;
        l->ended = 0;
        l->head_bytes = 0;
    }
    l->ended = 0; /* a late line (a stop's) after its end: held for the next flush */
    TrialCount *c = triallog_count_of(l, trial, 1);
    if (c)
        c->lines++;
    /* Only the first TRIALLOG_LINE_MAX bytes are shown (4 output bytes each at most:
     * termsafe's \xHH), so the cut is ours, at a known place, never termsafe's. */
    size_t len = strlen(text), shown = len > TRIALLOG_LINE_MAX ? TRIALLOG_LINE_MAX : len;
    char safe[4 * TRIALLOG_LINE_MAX + 1], src[128], ts[32];
    termsafe_n(safe, sizeof safe, text, shown);
    termsafe(src, sizeof src, source && source[0] ? source : "-");
    triallog_stamp(ts, sizeof ts, now);
    char more[64] = "";
    if (shown < len)
        snprintf(more, sizeof more, " [%zu more bytes cut]", len - shown);
    size_t cap = strlen(safe) + strlen(src) + strlen(ts) + strlen(more) + 64;
    char *line = malloc(cap);
    if (!line)
        return;
    int n = snprintf(line, cap, "%s trial %d %s %s: %s%s\n", ts, trial, src, stream, safe, more);
    size_t ln = (size_t)n < cap ? (size_t)n : cap - 1;
    if (!l->tail_n && !l->left_lines && l->head_bytes + ln <= TRIALLOG_HEAD_BYTES) {
        put(l, line, ln);
        l->head_bytes += ln;
        free(line);
        return;
    }
    hold(l, line, ln);
}

void triallog_end(TrialLog *l, int trial, const char *outcome, time_t now)
{
    if (!l->have_trial || trial != l->trial || l->ended)
        return;
    l->now = now;
    flush_tail(l, now);
    l->ended = 1;
    TrialCount *c = triallog_count_of(l, trial, 1);
    if (c) { /* what the total bound keeps first: a trial that went wrong */
        c->ended = 1;
        c->failed = strncmp(outcome, "ok", 2) != 0 && strncmp(outcome, "pruned", 6) != 0;
    }
    char ts[32], safe[1024], line[1200];
    triallog_stamp(ts, sizeof ts, now);
    termsafe(safe, sizeof safe, outcome);
    int n = snprintf(line, sizeof line, "%s trial %d ended: %s\n", ts, trial, safe);
    put(l, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}
