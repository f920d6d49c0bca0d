/* A host name lookup on glibc's resolver threads, handed off rather than waited for when its
 * owner lets go of it (a host pool closed at a quit, an attempt past its deadline).
 *
 * Who frees a Lookup: glibc keeps a pointer to its gaicb until the lookup ends, then starts
 * the notice thread (SIGEV_THREAD) that runs on_notice; in glibc's gai_misc.c the resolver
 * thread touches the gaicb no more once it has sent the notice (it only unlinks its own
 * request record), and a lookup gai_cancel took off the queue is never started nor noticed.
 * So: a lookup is ours to free once its notice came (`done`) or gai_cancel took it; until
 * then, one let go of is marked `dropped` and its notice frees it. `done` and `dropped` are
 * read and written under one mutex, so exactly one side frees, and only after glibc's last
 * touch.
 *
 * The dropped lookups still running sit on a list from a static variable, so that one still
 * running when the process exits is reachable, never a leak to LeakSanitizer, whatever glibc
 * keeps: its request records reach it today, but between starting the notice thread and our
 * callback glibc frees the record of the notice, and the pointer is then only in a thread
 * LSan did not start (whose stack it does not scan). One mutex and one list for the whole
 * process: glibc's resolver threads are the process's too. */
#include "remote/ssh/lookup.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct Lookup {
    struct gaicb cb;       /* glibc's until the notice (or gai_cancel) */
    struct addrinfo hints; /* cb.ar_request */
    char service[16];      /* cb.ar_service */
    int done;              /* the notice came: glibc is through with cb (under mu) */
    int dropped;           /* let go of: the notice frees it (under mu) */
    Lookup *prev, *next;   /* on `dropped_list` while dropped and not done */
    char name[];           /* cb.ar_name */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static Lookup *dropped_list;
static int dropped_count;

static void lookup_free(Lookup *l)
{
    if (l->cb.ar_result)
        freeaddrinfo(l->cb.ar_result);
    free(l);
}

static void unlink_dropped(Lookup *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else
        dropped_list = l->next;
    if (l->next)
        l->next->prev = l->prev;
    dropped_count--;
}

/* glibc's notice thread, once the lookup ended. */
static void on_notice(union sigval v)
{
    Lookup *l = v.sival_ptr;
    pthread_mutex_lock(&mu);
    l->done = 1;
    int dropped = l->dropped;
    if (dropped)
        unlink_dropped(l);
    pthread_mutex_unlock(&mu);
    if (dropped)
        lookup_free(l);
}

Lookup *lookup_start(const char *name, const char *service)
{
    size_t len = strlen(name);
    if (strlen(service) >= sizeof ((Lookup *)0)->service)
        return NULL;
    Lookup *l = calloc(1, sizeof *l + len + 1);
    if (!l)
        return NULL;
    memcpy(l->name, name, len + 1);
    strcpy(l->service, service);
    l->hints.ai_socktype = SOCK_STREAM;
    l->hints.ai_flags = AI_NUMERICSERV;
    l->cb.ar_name = l->name;
    l->cb.ar_service = l->service;
    l->cb.ar_request = &l->hints;
    struct gaicb *list[1] = {&l->cb};
    struct sigevent sev = {.sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_notice};
    sev.sigev_value.sival_ptr = l;
    if (getaddrinfo_a(GAI_NOWAIT, list, 1, &sev) != 0) {
        /* It may have been queued all the same (glibc ran out of memory after), and a
         * notice may come: let go of it as of one in flight. */
        lookup_drop(l);
        return NULL;
    }
    return l;
}

/* gai_error, not `done`: the result is glibc's to say (a notice thread it could not start
 * would leave `done` unset for good); `done` only says who frees. */
int lookup_result(Lookup *l, struct addrinfo **ai)
{
    int rc = gai_error(&l->cb);
    if (rc == EAI_INPROGRESS)
        return rc;
    if (rc == 0 && ai) {
        *ai = l->cb.ar_result;
        l->cb.ar_result = NULL;
    }
    return rc;
}

void lookup_drop(Lookup *l)
{
    if (!l)
        return;
    /* Still queued, not begun: glibc forgets it and sends no notice. */
    if (gai_cancel(&l->cb) == EAI_CANCELED) {
        lookup_free(l);
        return;
    }
    pthread_mutex_lock(&mu);
    int done = l->done;
    if (!done) {
        l->dropped = 1;
        l->prev = NULL;
        l->next = dropped_list;
        if (dropped_list)
            dropped_list->prev = l;
        dropped_list = l;
        dropped_count++;
    }
    pthread_mutex_unlock(&mu);
    if (done)
        lookup_free(l);
}

int lookup_dropped_running(void)
{
    pthread_mutex_lock(&mu);
    int n = dropped_count;
    pthread_mutex_unlock(&mu);
    return n;
}
