/* The session journal (DESIGN §5.4): one append-only JSON-lines file per session, each line
 * written and fsync'ed before the event it records is acted on; read back tolerating a torn
 * last line (power loss) and reporting a corrupted line by its number while keeping the rest. */
#ifndef TUNEDECK_JOURNAL_H
#define TUNEDECK_JOURNAL_H

#include <stddef.h>

#include "core/base/error.h"

typedef struct cJSON cJSON;

#define JOURNAL_EXT ".jsonl"
#define JOURNAL_ID_MAX 64

/* The folder journals live in, from the environment main read (cmd/paths.c; NULL or "" for
 * an unset variable): STATE_DIR/sessions ($TUNEDECK_STATE_DIR), else
 * XDG_STATE/tunedeck/sessions ($XDG_STATE_HOME, when absolute), else
 * HOME/.local/state/tunedeck/sessions. */
int journal_dir(const char *state_dir, const char *xdg_state, const char *home, char *out,
                size_t cap, Error *err);
/* Creates the folder and its parents (mode 0700); an existing journal folder that others
 * can read is tightened to 0700. */
int journal_dir_ensure(const char *dir, Error *err);
/* A fresh session id, "YYYYmmdd-HHMMSS-xxxxxx" (UTC time, random hex). */
void journal_new_id(char *out, size_t cap);
/* Ids are [A-Za-z0-9._-], 1..JOURNAL_ID_MAX-1 characters, not starting with '.'. */
int journal_id_valid(const char *id);
/* The file of a session: an id names DIR/ID.jsonl (dir: the journals' folder, journal_dir;
 * NULL when there is none); anything with a '/' is taken as a path. */
int journal_path(const char *dir, const char *id_or_path, char *out, size_t cap, Error *err);

typedef struct Journal Journal;

/* Creates DIR/ID.jsonl, mode 0600, refusing to follow a link or reuse a file. */
Journal *journal_create(const char *dir, const char *id, Error *err);
/* Reopens a journal to append to it; the file is first cut back to valid_bytes (what
 * journal_load found to be whole lines), so a torn last line never sits mid-file. */
Journal *journal_reopen(const char *path, long valid_bytes, Error *err);
/* journal_reopen in two steps, for a resume that must know the session is not running before
 * it reaches anything else (a Slurm allocation, the hosts) and keep it so, with no window
 * between a check and the reopen: takes the writer's lock, or fails with *busy set (another
 * process holds it: the message names the pid when journal_lock_holder finds it), changing
 * nothing in the file; a file that cannot be opened leaves open's errno (EROFS, EACCES, EPERM:
 * it may be read, not written); */
Journal *journal_take(const char *path, int *busy, Error *err);
/* then, once the journal is read, makes it private and cuts it back to valid_bytes. */
int journal_cut(Journal *j, long valid_bytes, Error *err);
/* The pid holding a flock on path, as /proc/locks lists it (Linux); 0 when unknown (none,
 * another pid namespace, no /proc). */
long journal_lock_holder(const char *path);
/* Like OpenSSH's StrictModes, before a journal is resumed (its trial_cmd would run): the
 * file and its folder must belong to this user and be writable by no one else (a folder
 * with the sticky bit, such as /tmp, may be world-writable). -1 with why otherwise. */
int journal_check_owned(const char *path, Error *err);
/* Writes the event as one line and fsyncs it. On any failure (a full disk) the partial line
 * is cut off again, the journal refuses every later append, and -1 says why. */
int journal_append(Journal *j, const cJSON *event, Error *err);
int journal_failed(const Journal *j);
/* Whether a live session holds the journal (its writer keeps a lock on it). */
int journal_in_use(const char *path);
const char *journal_file(const Journal *j);
void journal_close(Journal *j);

typedef struct {
    cJSON **events; /* the whole, valid lines in order: objects with a string "event" */
    size_t *lines;  /* their 1-based line numbers */
    size_t n;
    char **problems; /* "FILE:LINE: ..." for each line skipped */
    size_t n_problems;
    long valid_bytes; /* length of the prefix made of whole lines: where appending goes on */
    int torn_tail;    /* the last line had no newline (an interrupted write): dropped */
} JournalLog;

/* One line (without its newline): a JSON object with a string field "event" and no key twice
 * in one object (a line with one is damaged: journal_parse skips and reports it). */
int journal_parse_line(const char *line, size_t len, cJSON **out, Error *err);
/* Splits and parses a whole journal; never fails on content, only when memory runs out.
 * `source` names the file in problems. */
int journal_parse(const char *text, size_t len, const char *source, JournalLog *out, Error *err);
int journal_load(const char *path, JournalLog *out, Error *err);
/* A valid event as journal_scan reads it (line: its line number); not kept past the call. */
typedef void (*JournalEach)(void *ud, const cJSON *ev, size_t line);
/* As journal_load, with the same checks and the same problems, but each valid event is handed
 * to each(ud, ev, line) as it is read and only the first is kept in out (n is 0 or 1): what
 * `tunedeck sessions` needs of hundreds of journals, whose parse trees it held whole, each
 * one's until it was summarized (most of its time went to malloc and free). The events after
 * the first may hold only "event" and the top-level fields keys[0..n_keys) names (at most
 * 24), with the values a whole parse gives them: a line the skim vouches for
 * (core/journal/journal_skim.h) is not parsed whole. */
int journal_scan(const char *path, JournalLog *out, const char *const *keys, size_t n_keys,
                 JournalEach each, void *ud, Error *err);
void journal_log_clear(JournalLog *log);
/* Adds a problem line to a log (decoders above the file format report through it too). */
void journal_log_problem(JournalLog *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
