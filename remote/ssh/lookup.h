/* A host name lookup on glibc's resolver threads (getaddrinfo_a) that its owner can let go
 * of at any time without waiting: glibc cannot cancel a lookup once it runs, and one against
 * a silent DNS server runs for its whole timeout (seconds), so a lookup let go of while in
 * flight frees itself when glibc's completion notice comes. */
#ifndef TUNEDECK_LOOKUP_H
#define TUNEDECK_LOOKUP_H

#include <netdb.h>

typedef struct Lookup Lookup;

/* Starts resolving `name` (a host name, not a literal address) and `service` (a port number)
 * into stream-socket addresses; both are copied. NULL when it cannot be started. */
Lookup *lookup_start(const char *name, const char *service);

/* EAI_INPROGRESS while the lookup runs; once it ended, getaddrinfo's status, and on success
 * *ai takes its addresses (the caller's, freed with freeaddrinfo; asked again, NULL). With
 * ai NULL the addresses stay the lookup's. */
int lookup_result(Lookup *l, struct addrinfo **ai);

/* Lets go of the lookup, never waiting: one that ended (or had not begun) is freed now, one
 * still running frees itself when it ends. NULL is accepted. */
void lookup_drop(Lookup *l);

/* How many lookups let go of are still running (tests). */
int lookup_dropped_running(void);

#endif
