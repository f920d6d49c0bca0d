/* Commands run on the host pool's sessions (exec channels): input on stdin, output as
 * complete lines, then the exit status, or the SSH failure that ended them. Driven by the
 * pool's pollfds/step like everything else on the loop. */
#ifndef TUNEDECK_REXEC_H
#define TUNEDECK_REXEC_H

#include <stddef.h>

#include "core/base/error.h"
#include "core/base/stream.h"
#include "remote/ssh/hostpool.h"

typedef struct RemoteExec RemoteExec;

typedef enum {
    EXEC_RUNNING,
    EXEC_EXITED,     /* exit_status holds the code */
    EXEC_SIGNALED,   /* the command was killed by exit_signal */
    EXEC_SSH_FAILED, /* the connection failed or dropped: error says how */
    EXEC_CLOSED      /* closed by us (rexec_close) */
} ExecOutcome;

/* One complete line of output (without '\n'); truncated: it passed max_line. Must not
 * free the exec. */
typedef void (*ExecLineFn)(void *userdata, RemoteExec *x, StreamKind stream, const char *line,
                           int truncated);
/* Inside on_line: the length in bytes of the line it was given, a NUL byte in it counted
 * (the C string ends at one; the protocol reader refuses such a line rather than read half). */
size_t rexec_line_len(const RemoteExec *x);

typedef struct {
    ExecLineFn on_line;
    void *userdata;
    size_t max_line; /* per stream; default 4 MiB */
} ExecOptions;

/* Runs `command` (already quoted by the caller: see shquote.h) on a host, connecting first
 * if needed: an idle host at once, a down one at its next planned attempt (the pool's
 * back-off holds; the exec fails with the host's error if that attempt fails, and waits no
 * longer than its caller lets it); `input` (copied) goes to its standard input, then EOF. The
 * caller owns the result and frees it with rexec_free (which closes the channel if still
 * open). */
RemoteExec *hostpool_exec(HostPool *p, size_t host, const char *command, const char *input,
                          size_t input_len, const ExecOptions *o, Error *err);
/* hostpool_exec for a stop (a kill, a group stop, a scancel): urgent, so a down host is tried
 * at once, whatever its back-off, as hostpool_connect does; one attempt, the exec failing with
 * the host's error when it fails, at once when it is refused before any connection (its
 * configuration, identity or proxy). A ready or connecting host is used as hostpool_exec
 * uses it. */
RemoteExec *hostpool_exec_now(HostPool *p, size_t host, const char *command, const char *input,
                              size_t input_len, const ExecOptions *o, Error *err);
int rexec_done(const RemoteExec *x);
/* 0 while the command cannot have started on its host: its exec request has not been sent
 * (the host not connected yet, or the channel not yet asked for). Closed then, nothing of it
 * ever runs there. */
int rexec_sent(const RemoteExec *x);
/* When the command's exit status (or signal) arrived, 0 before: the channel may stay open
 * after it while a stray descendant still holds the command's output. */
int64_t rexec_exited_ms(const RemoteExec *x);
ExecOutcome rexec_outcome(const RemoteExec *x);
int rexec_exit_status(const RemoteExec *x);   /* -1 unless EXEC_EXITED */
const char *rexec_error(const RemoteExec *x); /* signal name or SSH failure, "" otherwise */
size_t rexec_host(const RemoteExec *x);
void rexec_close(RemoteExec *x);
void rexec_free(RemoteExec *x);

#endif
