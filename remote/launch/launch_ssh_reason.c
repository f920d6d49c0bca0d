/* A failed per-host trial's reason: which part leads, the others as they came
 * (launch_ssh_reason.h). */
#include "remote/launch/launch_ssh_reason.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The words for what failed in part p (launch_ssh_reason_head). */
static void failed_words(const PartFailure *p, char *out, size_t cap)
{
    if (p->notice && p->notice[0])
        snprintf(out, cap, "%s", p->notice);
    else if (p->signal)
        snprintf(out, cap, "%s", p->signal);
    else
        snprintf(out, cap, "exit status %d", p->exit_status);
}

void launch_ssh_reason_head(const PartFailure *p, char *out, size_t cap)
{
    char words[LAUNCH_SSH_REASON_MAX];
    failed_words(p, words, sizeof words);
    snprintf(out, cap, "the command failed on %s: %s", p->host, words);
}

/* Part p's failure after the leading one's in out ("; on h2: rank 2 (h2 cpu) exited with
 * status 1"): a rank that was killed without a word is often on a host stopped after a peer
 * that lost it ended, and more than one host may hold a rank that failed of its own. */
static void add_other(const PartFailure *p, char *out, size_t cap)
{
    size_t len = strlen(out);
    if (len + 8 >= cap)
        return;
    char words[LAUNCH_SSH_REASON_MAX];
    failed_words(p, words, sizeof words);
    snprintf(out + len, cap - len, "; on %s: %s", p->host, words);
}

size_t launch_ssh_reason_write(const RankCause *causes, const PartFailure *parts, size_t n,
                               size_t ended_first, const char *error_event, char *out, size_t cap)
{
    if (cap == 0)
        return ended_first;
    out[0] = 0;
    if (ended_first >= n)
        return ended_first;
    unsigned *came = malloc(n * sizeof *came);
    size_t *order = malloc(n * sizeof *order);
    const char **notice = malloc(n * sizeof *notice);
    size_t lead = ended_first;
    if (came && order && notice) {
        for (size_t i = 0; i < n; i++) {
            came[i] = parts[i].came;
            notice[i] = parts[i].notice;
        }
        size_t k = rankcause_order(causes, notice, came, n, ended_first, error_event, order);
        if (k)
            lead = order[0];
        launch_ssh_reason_head(&parts[lead], out, cap);
        for (size_t i = 1; i < k; i++)
            add_other(&parts[order[i]], out, cap);
    } else {
        launch_ssh_reason_head(&parts[lead], out, cap);
        for (size_t i = 0; i < n; i++)
            if (i != lead && parts[i].came)
                add_other(&parts[i], out, cap);
    }
    free(came);
    free(order);
    free(notice);
    return lead;
}
