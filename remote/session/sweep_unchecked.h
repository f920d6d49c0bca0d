/* What a sweep says of a host that did not answer: one line for the host, since nothing of
 * its groups was checked there, naming only those that may still run and how to stop them by
 * hand. */
#ifndef TUNEDECK_SWEEP_UNCHECKED_H
#define TUNEDECK_SWEEP_UNCHECKED_H

#include "remote/launch/orphans.h"
#include "remote/ssh/hostpool.h"

/* E.g. "leftover check on h2: not checked (h2 did not answer: no answer within 15 s); trial
 * 3's process group 4242 may still run: stop it by hand with: ssh h2 kill -KILL -- -4242".
 * `label` starts it ("leftover check"); `why` is what the stop met (its result without "not
 * stopped: "). The groups named are those of l on `machine` not seen_end, in l's order; when
 * there is none the line says every group there was seen to end. The command logs in as the
 * pool does (host: its login, port and address; NULL: the machine's name), each word
 * shell-quoted where it needs it (shquote.h). Caller frees; NULL when memory runs out. */
char *sweep_unchecked_line(const OrphanList *l, const char *machine, const HostInfo *host,
                           const char *label, const char *why);

#endif
