/* The console's SSH desk (hostdesk.h). */
#include "remote/live/hostdesk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct HostDesk {
    HostPool *pool;
    long pending;          /* host whose acceptance awaits its answer, -1 none */
    char outcome[512];
    int outcome_bad, has_outcome;
    unsigned long sig;
};

HostDesk *hostdesk_new(HostPool *pool)
{
    HostDesk *d = calloc(1, sizeof *d);
    if (d) {
        d->pool = pool;
        d->pending = -1;
    }
    return d;
}

void hostdesk_free(HostDesk *d)
{
    free(d);
}

size_t hostdesk_pollfds(HostDesk *d, SchedLive *live, struct pollfd *fds, size_t cap,
                        int64_t *deadline_ms)
{
    if (live) /* the live scheduler's driver polls the pool and adds its tick */
        return schedlive_pollfds(live, fds, cap, deadline_ms);
    return hostpool_pollfds(d->pool, fds, cap, deadline_ms);
}

/* A cheap fingerprint of what the hosts view shows. */
static unsigned long signature(const HostPool *p)
{
    unsigned long h = 5381;
    for (size_t m = 0; m < hostpool_size(p); m++) {
        HostInfo i;
        hostpool_info(p, m, &i);
        h = h * 33 + (unsigned long)i.state;
        h = h * 33 + (unsigned long)i.key;
        h = h * 33 + (unsigned long)i.drops + (unsigned long)i.connects * 7;
        for (const char *s = i.last_error; *s; s++)
            h = h * 33 + (unsigned char)*s;
        for (const char *s = i.offered_fp; *s; s++)
            h = h * 33 + (unsigned char)*s;
        h = h * 33 + (unsigned long)(i.handshake_ms >= 0 ? i.handshake_ms : -1);
    }
    return h;
}

static void settle_acceptance(HostDesk *d)
{
    HostInfo i;
    hostpool_info(d->pool, (size_t)d->pending, &i);
    if (i.key == HOSTKEY_UNCHECKED || (i.state != HOST_READY && i.state != HOST_DOWN))
        return;
    if (i.key == HOSTKEY_ACCEPTED) {
        snprintf(d->outcome, sizeof d->outcome,
                 "%s: host key %s accepted and saved in known_hosts (%s)", i.name, i.fingerprint,
                 i.known_hosts);
        d->outcome_bad = 0;
    } else if (i.key == HOSTKEY_OK) {
        /* Someone else listed it meanwhile (ssh, another console): nothing of ours written. */
        snprintf(d->outcome, sizeof d->outcome,
                 "%s: host key %s was already in known_hosts (%s) when it answered: nothing "
                 "written",
                 i.name, i.fingerprint, i.known_hosts);
        d->outcome_bad = 0;
    } else {
        snprintf(d->outcome, sizeof d->outcome, "%s: key not accepted: %s", i.name,
                 i.last_error[0] ? i.last_error : hostpool_key_name(i.key));
        d->outcome_bad = 1;
    }
    d->has_outcome = 1;
    d->pending = -1;
}

void hostdesk_step(HostDesk *d, SchedLive *live, const struct pollfd *fds, size_t n,
                   int64_t now_ms)
{
    if (live)
        schedlive_step(live, fds, n, now_ms);
    else
        hostpool_step(d->pool, fds, n, now_ms);
    if (d->pending >= 0)
        settle_acceptance(d);
}

int hostdesk_offered(const HostDesk *d, size_t host, char *fp, size_t cap, Error *err)
{
    if (host >= hostpool_size(d->pool))
        return error_set(err, "no such host");
    HostInfo i;
    hostpool_info(d->pool, host, &i);
    if (!i.offered_fp[0])
        return error_set(err, "%s: only an unknown host key can be accepted (this one is %s)%s",
                         i.name, hostpool_key_name(i.key),
                         i.key == HOSTKEY_CHANGED || i.key == HOSTKEY_REVOKED
                             ? ": a changed or revoked key is never accepted here"
                             : "");
    snprintf(fp, cap, "%s", i.offered_fp);
    return 0;
}

int hostdesk_accept(HostDesk *d, size_t host, const char *fp, Error *err)
{
    if (d->pending >= 0)
        return error_set(err, "another host key is being accepted; wait for its answer");
    if (hostpool_accept_host_key(d->pool, host, fp, err) < 0)
        return -1;
    hostpool_connect(d->pool, host, 1); /* kept from now on, like every console host */
    d->pending = (long)host;
    return 0;
}

int hostdesk_reconnect(HostDesk *d, size_t host)
{
    if (host >= hostpool_size(d->pool))
        return -1;
    hostpool_connect(d->pool, host, 1);
    return 0;
}

int hostdesk_take_outcome(HostDesk *d, char *msg, size_t cap, int *bad)
{
    if (!d->has_outcome)
        return 0;
    snprintf(msg, cap, "%s", d->outcome);
    *bad = d->outcome_bad;
    d->has_outcome = 0;
    return 1;
}

int hostdesk_changed(HostDesk *d)
{
    unsigned long s = signature(d->pool);
    if (s == d->sig)
        return 0;
    d->sig = s;
    return 1;
}
