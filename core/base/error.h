/* An error value that carries its message and context (file, field, what was expected).
 * Functions return 0/-1 or a pointer/NULL and fill an Error; only main prints and exits. */
#ifndef TUNEDECK_ERROR_H
#define TUNEDECK_ERROR_H

#define ERROR_MSG_MAX 512

/* What failed, so that main can choose the exit status (core/base/exitcode.h) without
 * reading messages: a loader marks its failures ERROR_INPUT (the file is missing or bad). */
typedef enum { ERROR_OTHER = 0, ERROR_INPUT, ERROR_REMOTE } ErrorKind;

typedef struct {
    char msg[ERROR_MSG_MAX];
    ErrorKind kind; /* error_set resets it to ERROR_OTHER */
} Error;

/* Sets the message; err may be NULL (the caller does not want details). Returns -1 so
 * that `return error_set(err, ...)` reads as a failure. */
int error_set(Error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Marks what kind of failure err holds; returns -1 like error_set. */
int error_mark(Error *err, ErrorKind kind);

/* Prefixes context to an existing message: "ctx: old message". */
int error_prefix(Error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The one out-of-memory policy of core/: an allocation that fails is an error like any other.
 * The function frees what it had built, leaves its inputs as they were, and returns -1 or
 * NULL with "CONTEXT: out of memory", CONTEXT saying what was being built. core/ never aborts or exits on it: only main decides. Returns -1. */
int error_no_memory(Error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
