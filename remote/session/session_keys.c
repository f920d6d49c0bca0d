/* Hosts whose key the pool refused (unknown, changed, revoked): no trial of the session
 * reaches them again, since each would fail the same way and spend the budget. Their machines
 * are left out of the optimizer's schedules, each said once; once no trial can run (the single
 * launcher's host refused, or every machine's) the session stops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/session/session_priv.h"

/* Whether machine m's host is down for its host key: refused again at every attempt until
 * known_hosts is fixed (hostkey.c), so for the rest of the session. */
static int key_refused(const Session *s, size_t m, HostInfo *hi)
{
    if (!s->pool || m >= hostpool_size(s->pool))
        return 0;
    hostpool_info(s->pool, m, hi);
    return hi->state == HOST_DOWN &&
           (hi->key == HOSTKEY_UNKNOWN || hi->key == HOSTKEY_CHANGED || hi->key == HOSTKEY_REVOKED);
}

/* Says once per machine that it is left out, with the pool's own words on its key. */
static void say_refused(Session *s, size_t m, const HostInfo *hi)
{
    if (!s->key_refused_said) {
        s->key_refused_said = calloc(s->cluster->n_machines + 1, 1);
        if (!s->key_refused_said)
            return;
    }
    if (s->key_refused_said[m])
        return;
    s->key_refused_said[m] = 1;
    char line[ERROR_MSG_MAX + 256];
    snprintf(line, sizeof line, "%s is left out of the trials from now on: %s",
             s->cluster->machines[m].name, hi->last_error);
    if (s->spec.on_report)
        s->spec.on_report(s->spec.report_userdata, line);
}

int session_machine_usable(void *userdata, size_t machine)
{
    Session *s = userdata;
    HostInfo hi;
    /* the single launcher runs every trial on its one host: nothing to move off */
    if (strcmp(s->launcher, "per-host") != 0 || !key_refused(s, machine, &hi))
        return 1;
    say_refused(s, machine, &hi);
    return 0;
}

int session_keys_check(Session *s, char *why, size_t cap)
{
    const Cluster *c = s->cluster;
    int single = strcmp(s->launcher, "single") == 0;
    if (!s->pool || (!single && strcmp(s->launcher, "per-host") != 0))
        return 0;
    long launch =
        single && c->trial.launch_host[0] ? cluster_find_machine(c, c->trial.launch_host) : 0;
    char names[256] = "";
    size_t used = 0;
    /* per-host: while any machine is left, the optimizer's schedules were moved off the
     * refused ones (an operator's override that names one fails as it would have) */
    for (size_t m = 0; m < c->n_machines; m++) {
        HostInfo hi;
        if (single && (long)m != launch)
            continue;
        if (!key_refused(s, m, &hi))
            return 0;
        say_refused(s, m, &hi);
        int n = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                         c->machines[m].name);
        used = n < 0 || (size_t)n >= sizeof names - used ? sizeof names - 1 : used + (size_t)n;
    }
    if (!used)
        return 0;
    s->keys_refused = 1;
    const char *id = s->journal_open ? tune_journal_id(s->journal) : "";
    snprintf(why, cap,
             "the host key of %s is refused (said above), and no trial can run without %s: fix "
             "known_hosts as said%s%s",
             names, strchr(names, ',') ? "them" : "it",
             id[0] ? ", then tunedeck tune --resume " : "", id);
    return -1;
}

int session_keys_refused(const Session *s)
{
    return s && s->keys_refused;
}
