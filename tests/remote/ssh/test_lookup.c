#include <criterion/criterion.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>

#include "remote/ssh/lookup.h"

/* The names here are /etc/hosts' (localhost): no test needs a DNS server. A lookup let go of
 * while glibc still runs it, against a server that never answers, is tests/integration/
 * console_screen.sh's (lib/slowdns.sh). */

static int wait_result(Lookup *l, struct addrinfo **ai)
{
    int rc;
    while ((rc = lookup_result(l, ai)) == EAI_INPROGRESS)
        usleep(1000);
    return rc;
}

Test(lookup, resolves_a_name_into_stream_addresses_with_the_port)
{
    Lookup *l = lookup_start("localhost", "2222");
    cr_assert_not_null(l);
    struct addrinfo *ai = NULL;
    cr_assert_eq(wait_result(l, &ai), 0);
    cr_assert_not_null(ai);
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        cr_assert_eq(a->ai_socktype, SOCK_STREAM);
        int port = a->ai_family == AF_INET
                       ? ntohs(((struct sockaddr_in *)a->ai_addr)->sin_port)
                       : ntohs(((struct sockaddr_in6 *)a->ai_addr)->sin6_port);
        cr_assert_eq(port, 2222);
    }
    /* asked again, the addresses are the caller's already */
    struct addrinfo *again = NULL;
    cr_assert_eq(lookup_result(l, &again), 0);
    cr_assert_null(again);
    freeaddrinfo(ai);
    lookup_drop(l);
}

Test(lookup, a_service_that_is_no_port_fails_as_getaddrinfo_says)
{
    Lookup *l = lookup_start("localhost", "ssh-ish");
    cr_assert_not_null(l);
    struct addrinfo *ai = NULL;
    cr_assert_neq(wait_result(l, &ai), 0); /* AI_NUMERICSERV: a port number only */
    cr_assert_null(ai);
    lookup_drop(l);
    cr_assert_null(lookup_start("localhost", "123456789012345678"), "a service too long to copy");
}

/* Let go of at every stage at once, more than glibc's resolver threads (20): queued ones are
 * cancelled, running ones free themselves from their notice, ended ones at once. Each is
 * freed exactly once and none is left behind (the sanitizer tree runs this too). */
Test(lookup, lookups_let_go_of_in_flight_free_themselves)
{
    enum { N = 64 };
    Lookup *l[N];
    for (int i = 0; i < N; i++)
        cr_assert_not_null(l[i] = lookup_start("localhost", "22"));
    for (int i = 0; i < N; i++)
        lookup_drop(l[i]);
    lookup_drop(NULL);
    while (lookup_dropped_running() > 0)
        usleep(1000);
    cr_assert_eq(lookup_dropped_running(), 0);
}

/* One that ended, its addresses never claimed: lookup_drop frees them with it (a leak to
 * the sanitizer tree otherwise). */
Test(lookup, an_ended_lookup_let_go_of_frees_its_unclaimed_addresses)
{
    Lookup *l = lookup_start("localhost", "22");
    cr_assert_not_null(l);
    int rc;
    while ((rc = lookup_result(l, NULL)) == EAI_INPROGRESS)
        usleep(1000);
    cr_assert_eq(rc, 0);
    lookup_drop(l);
}
