/* Session journal files: where they live, creating and appending durably, reading back. */
#include "core/journal/journal.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base/dirsync.h"
#include "core/base/jdupkey.h"
#include "core/base/jfield.h"
#include "core/base/jsonprint.h"
#include "core/base/ownpath.h"
#include "core/journal/journal_skim.h"

struct Journal {
    int fd;
    long size; /* bytes of whole lines written so far: where a failed write is cut back to */
    int failed;
    char path[4096];
};

int journal_dir(const char *dir, const char *xdg, const char *home, char *out, size_t cap,
                Error *err)
{
    int n;
    if (dir && dir[0])
        n = snprintf(out, cap, "%s/sessions", dir);
    else if (xdg && xdg[0] == '/')
        n = snprintf(out, cap, "%s/tunedeck/sessions", xdg);
    else if (home && home[0])
        n = snprintf(out, cap, "%s/.local/state/tunedeck/sessions", home);
    else
        return error_set(err, "journal: no state folder: set TUNEDECK_STATE_DIR, "
                              "XDG_STATE_HOME or HOME");
    if (n < 0 || (size_t)n >= cap)
        return error_set(err, "journal: the state folder path is too long");
    return 0;
}

static int mkdir_durable(const char *path, Error *err)
{
    if (mkdir(path, 0700) < 0)
        return errno == EEXIST
                   ? 0
                   : error_set(err, "journal: cannot create %s: %s", path, strerror(errno));
    if (dirsync_parent(path) < 0)
        return error_set(err, "journal: cannot sync the folder that holds %s: %s", path,
                         strerror(errno));
    return 0;
}

int journal_dir_ensure(const char *dir, Error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return error_set(err, "journal: folder path too long");
    /* mkdir -p, each new level 0700: nothing of a session is anyone else's business. A level
     * made here is synced into its parent, so that a power loss cannot take the folder (and
     * the journal the session then fsyncs into it) away. */
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir_durable(path, err) < 0)
            return -1;
        *p = '/';
    }
    if (mkdir_durable(path, err) < 0)
        return -1;
    struct stat st;
    if (lstat(path, &st) < 0)
        return error_set(err, "journal: %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return error_set(err, "journal: %s: expected a folder", path);
    if ((st.st_mode & 077) && chmod(path, 0700) < 0)
        return error_set(err, "journal: %s is readable by others and cannot be made private: %s",
                         path, strerror(errno));
    return 0;
}

void journal_new_id(char *out, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    unsigned char r[3] = {0, 0, 0};
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        unsigned v = (unsigned)getpid() ^ (unsigned)clock();
        r[0] = (unsigned char)v;
        r[1] = (unsigned char)(v >> 8);
        r[2] = (unsigned char)(v >> 16);
    }
    snprintf(out, cap, "%04d%02d%02d-%02d%02d%02d-%02x%02x%02x", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, r[0], r[1], r[2]);
}

int journal_id_valid(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= JOURNAL_ID_MAX || id[0] == '.')
        return 0;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

int journal_path(const char *dir, const char *id_or_path, char *out, size_t cap, Error *err)
{
    if (strchr(id_or_path, '/')) {
        if (snprintf(out, cap, "%s", id_or_path) >= (int)cap)
            return error_set(err, "journal: path too long");
        return 0;
    }
    if (!journal_id_valid(id_or_path))
        return error_set(err,
                         "journal: expected a session id of letters, digits, '.', '_' or "
                         "'-' (see `tunedeck sessions`), found '%s'",
                         id_or_path);
    if (!dir)
        return error_set(err, "journal: no state folder: set TUNEDECK_STATE_DIR, "
                              "XDG_STATE_HOME or HOME");
    if (snprintf(out, cap, "%s/%s%s", dir, id_or_path, JOURNAL_EXT) >= (int)cap)
        return error_set(err, "journal: path too long");
    return 0;
}

static Journal *journal_wrap(int fd, const char *path, long size)
{
    Journal *j = calloc(1, sizeof *j);
    if (!j) {
        close(fd);
        return NULL;
    }
    j->fd = fd;
    j->size = size;
    snprintf(j->path, sizeof j->path, "%s", path);
    return j;
}

Journal *journal_create(const char *dir, const char *id, Error *err)
{
    if (!journal_id_valid(id)) {
        error_set(err, "journal: invalid session id '%s'", id);
        return NULL;
    }
    if (journal_dir_ensure(dir, err) < 0)
        return NULL;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s%s", dir, id, JOURNAL_EXT) >= (int)sizeof path) {
        error_set(err, "journal: path too long");
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        error_set(err, "journal: cannot create %s: %s", path, strerror(errno));
        return NULL;
    }
    fchmod(fd, 0600);             /* whatever the umask said */
    flock(fd, LOCK_EX | LOCK_NB); /* a new file: nobody else holds it */
    /* The file's name is an entry of the folder: without the folder's own fsync a power loss
     * can take the whole journal away, every line fsync'd into it included. */
    if (dirsync(dir) < 0) {
        error_set(err, "journal: cannot sync the folder %s after creating %s: %s", dir, path,
                  strerror(errno));
        close(fd);
        unlink(path);
        return NULL;
    }
    Journal *j = journal_wrap(fd, path, 0);
    if (!j)
        error_no_memory(err, "journal");
    return j;
}

Journal *journal_take(const char *path, int *busy, Error *err)
{
    *busy = 0;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        /* as journal_load says it: a resume takes the lock before it reads. A file it may
         * read but not write (a read-only folder or mount, an immutable file) is said so:
         * "cannot open" alone, beside a `tunedeck sessions` that reads it, said it was
         * unreadable. errno is kept for the caller. */
        int why = errno;
        int readonly = why == EACCES || why == EPERM || why == EROFS;
        error_set(err, "journal %s: cannot open%s: %s", path,
                  readonly ? " to append (a resume writes to it; it can only be read here)" : "",
                  strerror(why));
        errno = why;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        error_set(err, "journal: %s: expected a regular file", path);
        return NULL;
    }
    /* The writer holds the lock while the session lives: one writer per journal. */
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        *busy = 1;
        long pid = journal_lock_holder(path);
        if (pid > 0)
            error_set(err, "journal %s is locked by pid %ld", path, pid);
        else
            error_set(err, "journal %s is locked by another process", path);
        return NULL;
    }
    Journal *j = journal_wrap(fd, path, (long)st.st_size);
    if (!j)
        error_no_memory(err, "journal");
    return j;
}

int journal_cut(Journal *j, long valid_bytes, Error *err)
{
    struct stat st;
    if (fstat(j->fd, &st) < 0)
        return error_set(err, "journal: %s: %s", j->path, strerror(errno));
    if ((st.st_mode & 077) && fchmod(j->fd, 0600) < 0)
        return error_set(err, "journal: %s is readable by others and cannot be made private",
                         j->path);
    if (st.st_size != valid_bytes && (ftruncate(j->fd, valid_bytes) < 0 || fsync(j->fd) < 0))
        return error_set(err, "journal: cannot cut the torn last line off %s: %s", j->path,
                         strerror(errno));
    j->size = valid_bytes;
    return 0;
}

Journal *journal_reopen(const char *path, long valid_bytes, Error *err)
{
    int busy;
    Journal *j = journal_take(path, &busy, err);
    if (j && journal_cut(j, valid_bytes, err) < 0) {
        journal_close(j);
        return NULL;
    }
    return j;
}

static int check_owned(const char *path, const char *what, int allow, Error *err)
{
    OwnpathCheck c = ownpath_check(path, allow);
    if (c.verdict == OWNPATH_MISSING || c.verdict == OWNPATH_UNCHECKED)
        return 0; /* nothing to trust: the loader says what is missing */
    if (c.verdict == OWNPATH_NOT_OURS)
        return error_set(err,
                         "journal: %s %s belongs to uid %u, not to you (uid %u): refused; "
                         "tunedeck resumes only your own journals",
                         what, path, c.uid, (unsigned)geteuid());
    if (c.verdict == OWNPATH_WRITABLE)
        return error_set(err,
                         "journal: %s %s is writable by %s (mode %03o): refused, someone else "
                         "could have changed what it runs; check it, then chmod go-w it",
                         what, path, ownpath_writers(c.mode), c.mode);
    return 0;
}

int journal_check_owned(const char *path, Error *err)
{
    char dir[4096];
    if (ownpath_folder(path, dir, sizeof dir) < 0)
        return error_set(err, "journal %.200s...: path too long", path);
    if (check_owned(dir, "state folder", OWNPATH_STICKY_OK, err) < 0 ||
        check_owned(path, "file", 0, err) < 0)
        return -1;
    return 0;
}

int journal_append(Journal *j, const cJSON *event, Error *err)
{
    if (j->failed)
        return error_set(err, "journal %s: an earlier write failed; nothing more is written",
                         j->path);
    /* jsonprint's text: bytes that are not UTF-8 in a trial's words or a name made the line
     * no JSON for any strict reader (Python's json refused it); tunedeck's own reader takes
     * the escapes back as the same code points. */
    char *text = jsonprint_text(event, 0);
    if (!text) {
        j->failed = 1;
        return error_no_memory(err, "journal %s", j->path);
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the NUL: the line goes out in one write */
    size_t done = 0;
    int saved = 0;
    while (done < len + 1) {
        ssize_t n = write(j->fd, text + done, len + 1 - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            saved = n < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)n;
    }
    free(text);
    if (!saved && fsync(j->fd) < 0)
        saved = errno;
    if (saved) {
        /* Keep the file a sequence of whole lines: cut the partial line off again. */
        j->failed = 1;
        if (ftruncate(j->fd, j->size) == 0)
            fsync(j->fd);
        return error_set(err, "journal %s: write failed: %s", j->path, strerror(saved));
    }
    j->size += (long)(len + 1);
    return 0;
}

int journal_failed(const Journal *j)
{
    return j->failed;
}

const char *journal_file(const Journal *j)
{
    return j->path;
}

int journal_in_use(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    int busy = flock(fd, LOCK_SH | LOCK_NB) < 0;
    close(fd);
    return busy;
}

void journal_close(Journal *j)
{
    if (!j)
        return;
    close(j->fd);
    free(j);
}

/* ---- reading back ---- */

void journal_log_problem(JournalLog *log, const char *fmt, ...)
{
    char buf[ERROR_MSG_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **grown = realloc(log->problems, (log->n_problems + 1) * sizeof *grown);
    if (!grown)
        return;
    log->problems = grown;
    char *copy = strdup(buf);
    if (copy)
        log->problems[log->n_problems++] = copy;
}

int journal_parse_line(const char *line, size_t len, cJSON **out, Error *err)
{
    *out = NULL;
    if (memchr(line, 0, len))
        return error_set(err, "expected a JSON object, found a NUL byte");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(line, len, &end, 0);
    if (!root)
        return error_set(err, "malformed JSON at column %zu",
                         end && end >= line ? (size_t)(end - line) + 1 : (size_t)1);
    while (end && (size_t)(end - line) < len && (*end == ' ' || *end == '\t' || *end == '\r'))
        end++;
    if (end && (size_t)(end - line) < len) {
        cJSON_Delete(root);
        return error_set(err, "unexpected text after the JSON object at column %zu",
                         (size_t)(end - line) + 1);
    }
    if (!cJSON_IsObject(root)) {
        error_set(err, "expected a JSON object, found %s", jfield_type_name(root));
        cJSON_Delete(root);
        return -1;
    }
    /* A key twice is damage like any other (tunedeck writes none): the line is skipped and
     * reported, never read from whichever copy cJSON finds first. */
    if (jdupkey_check(root, err) < 0) {
        cJSON_Delete(root);
        return -1;
    }
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "event");
    if (!cJSON_IsString(ev)) {
        error_set(err, "field 'event': expected a string, found %s", jfield_type_name(ev));
        cJSON_Delete(root);
        return -1;
    }
    *out = root;
    return 0;
}

static int add_event(JournalLog *log, cJSON *ev, size_t line)
{
    cJSON **events = realloc(log->events, (log->n + 1) * sizeof *events);
    if (!events)
        return -1;
    log->events = events;
    size_t *lines = realloc(log->lines, (log->n + 1) * sizeof *lines);
    if (!lines)
        return -1;
    log->lines = lines;
    log->events[log->n] = ev;
    log->lines[log->n] = line;
    log->n++;
    return 0;
}

/* What journal_scan asks of the lines: NULL each keeps every event (journal_parse). */
typedef struct {
    const char *const *keys;
    size_t n_keys;
    JournalEach each; /* handed every valid event; only the first is kept */
    void *ud;
} Scan;

static int parse_text(const char *text, size_t len, const char *source, JournalLog *out,
                      const Scan *scan, Error *err)
{
    JournalEach each = scan ? scan->each : NULL;
    memset(out, 0, sizeof *out);
    size_t pos = 0, line = 0;
    while (pos < len) {
        line++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        if (!nl) {
            /* No newline: the write of this line never completed, so nothing acted on it. */
            out->torn_tail = 1;
            journal_log_problem(out, "%s:%zu: torn last line (%zu bytes, no newline) dropped",
                                source, line, len - pos);
            break;
        }
        size_t n = (size_t)(nl - start);
        pos += n + 1;
        out->valid_bytes = (long)pos;
        size_t blank = 0;
        while (blank < n && (start[blank] == ' ' || start[blank] == '\t' || start[blank] == '\r'))
            blank++;
        if (blank == n)
            continue;
        cJSON *ev;
        Error perr;
        /* the first event is kept whole (a resume's check reads it); after it, a line the skim
         * vouches for is not parsed whole */
        if (each && out->n > 0 && journal_skim_line(start, n, scan->keys, scan->n_keys, &ev)) {
            each(scan->ud, ev, line);
            cJSON_Delete(ev);
            continue;
        }
        if (journal_parse_line(start, n, &ev, &perr) < 0) {
            journal_log_problem(out, "%s:%zu: corrupted line skipped: %s", source, line, perr.msg);
            continue;
        }
        if (each)
            each(scan->ud, ev, line);
        if (each && out->n > 0) {
            cJSON_Delete(ev);
            continue;
        }
        if (add_event(out, ev, line) < 0) {
            cJSON_Delete(ev);
            journal_log_clear(out);
            return error_no_memory(err, "%s", source);
        }
    }
    return 0;
}

int journal_parse(const char *text, size_t len, const char *source, JournalLog *out, Error *err)
{
    return parse_text(text, len, source, out, NULL, err);
}

static int load(const char *path, JournalLog *out, const Scan *scan, Error *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return error_set(err, "journal %s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return error_set(err, "journal %s: expected a regular file", path);
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return error_set(err, "journal %s: read: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (!buf)
        return error_no_memory(err, "journal %s", path);
    int rc = parse_text(buf, len, path, out, scan, err);
    free(buf);
    return rc;
}

int journal_load(const char *path, JournalLog *out, Error *err)
{
    return load(path, out, NULL, err);
}

int journal_scan(const char *path, JournalLog *out, const char *const *keys, size_t n_keys,
                 JournalEach each, void *ud, Error *err)
{
    Scan scan = {keys, n_keys, each, ud};
    return load(path, out, &scan, err);
}

void journal_log_clear(JournalLog *log)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->n; i++)
        cJSON_Delete(log->events[i]);
    free(log->events);
    free(log->lines);
    for (size_t i = 0; i < log->n_problems; i++)
        free(log->problems[i]);
    free(log->problems);
    memset(log, 0, sizeof *log);
}
