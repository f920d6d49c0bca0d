/* Channels let go of while their open is unanswered, kept on their host until the server
 * answers it: then closed if it opened, and freed. libssh 0.10 frees such a channel at once
 * (ssh_channel_free: it is not bound to a server number yet) and then ignores the server's
 * confirmation as an unknown channel's, so the session stayed open on the server, empty, until
 * the connection ended: with sshd's MaxSessions, enough of them refused every later open. */
#include <stdlib.h>

#include "remote/ssh/hostpool_priv.h"

void chanlinger_keep(Host *h, ssh_channel ch)
{
    if (h->n_linger == h->cap_linger) {
        size_t cap = h->cap_linger ? h->cap_linger * 2 : 4;
        ssh_channel *g = realloc(h->linger, cap * sizeof *g);
        if (!g) { /* out of memory: let go as before, the server's session kept till the end */
            ssh_channel_free(ch);
            return;
        }
        h->linger = g;
        h->cap_linger = cap;
    }
    h->linger[h->n_linger++] = ch;
}

void chanlinger_step(Host *h)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->n_linger; i++) {
        ssh_channel ch = h->linger[i];
        /* On a channel already opening, this only reads what has come and tells its state:
         * SSH_AGAIN while unanswered, SSH_OK once confirmed, SSH_ERROR once refused. */
        int rc = ssh_channel_open_session(ch);
        if (rc == SSH_AGAIN) {
            h->linger[kept++] = ch;
            continue;
        }
        /* A confirmed one has its server number now: its CLOSE reaches it, and libssh frees it
         * on the server's CLOSE. A refused one had nothing there: no CLOSE (rexec.c says why). */
        if (rc == SSH_OK)
            ssh_channel_close(ch);
        ssh_channel_free(ch);
    }
    h->n_linger = kept;
}

void chanlinger_drop(Host *h)
{
    free(h->linger); /* the channels themselves go with their session (ssh_free) */
    h->linger = NULL;
    h->n_linger = h->cap_linger = 0;
}
