/* A trial (DESIGN §3): its protocol v1 schedule parsed and checked, its secret and its
 * slowdowns taken, then played as one machine of a per-host trial (trial_host.h) or as every
 * machine on this host (trial_local.h). */
#ifndef TUNEDECK_TRIAL_H
#define TUNEDECK_TRIAL_H

#include <stddef.h>

#include "core/base/error.h"
#include "tools/worker/psgate.h"
#include "tools/worker/slowdown.h"

typedef struct {
    int all_local;              /* play every machine here */
    const char *machine;        /* else the machine this process plays; NULL or "" = none said */
    const char *machine_from;   /* where machine came from, for messages: "--machine" */
    int port_base;              /* a machine's PS shard listens on port_base + its index */
    const char *port_base_from; /* where port_base came from, for messages: "--port-base" */
    double connect_timeout_s;
    const SlowdownSpec *slow; /* kept, not copied */
    size_t n_slow;
    PsLogFn log; /* where a shard's refusals go (which peer, why) */
} TrialOptions;

/* Runs the trial the schedule text (len bytes) describes (source names it in errors); its
 * protocol lines go to standard output. An error in the schedule is marked ERROR_INPUT. The
 * text holds the trial's "ps_secret": it is wiped (not freed) as soon as it is parsed, and
 * the parsed copy as soon as the secret is taken, so that neither sits in memory, nor in the
 * children of --all-local, while the trial runs. */
int trial_run(const TrialOptions *o, char *text, size_t len, const char *source, Error *err);

#endif
