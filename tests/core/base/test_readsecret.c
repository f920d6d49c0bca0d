/* Reading a stream that holds a secret (core/base/readsecret.c): a pipe fed in small pieces
 * and far past the first buffer is read whole (the buffer grows many times, each by
 * allocate, copy, wipe), and a too-long or unreadable input is refused with readall's
 * messages. What a free left behind cannot be seen from here; the growth path is what can. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/readsecret.h"

typedef struct {
    int fd;
    const char *bytes;
    size_t n, piece;
} Feeder;

/* Writes in odd-sized pieces, so the reader meets short reads at every offset. */
static void *feed(void *arg)
{
    Feeder *f = arg;
    for (size_t off = 0; off < f->n;) {
        size_t k = f->n - off < f->piece ? f->n - off : f->piece;
        ssize_t w = write(f->fd, f->bytes + off, k);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

static char *read_fed(const char *bytes, size_t n, size_t max_bytes, size_t *len, Error *err)
{
    /* A refusal closes the read end while the feeder may still write: that write must fail
     * (EPIPE), not raise SIGPIPE, which kills the test (8 in 60 runs under ASan). */
    signal(SIGPIPE, SIG_IGN);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    Feeder f = {.fd = p[1], .bytes = bytes, .n = n, .piece = 997};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, feed, &f), 0);
    char *text = readsecret_fd(p[0], max_bytes, len, err);
    close(p[0]); /* a refusal stops reading early: the feeder's write then fails and it ends */
    pthread_join(t, NULL);
    return text;
}

Test(readsecret, a_schedule_far_larger_than_the_first_buffer_is_read_whole)
{
    size_t n = 1u << 20; /* 4096 bytes first: eight doublings */
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    size_t len = 0;
    Error err;
    char *text = read_fed(big, n, 64u << 20, &len, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cr_assert_eq(len, n);
    cr_assert(memcmp(text, big, n) == 0 && text[n] == 0);
    readsecret_free(text, len);
    free(big);
}

Test(readsecret, an_empty_input_is_an_empty_string)
{
    size_t len = 1;
    Error err;
    char *text = read_fed("", 0, 0, &len, &err);
    cr_assert_not_null(text, "%s", err.msg);
    cr_assert_eq(len, 0);
    cr_assert_str_eq(text, "");
    readsecret_free(text, len);
}

Test(readsecret, input_over_the_limit_is_refused_with_the_limit)
{
    static char bytes[20000];
    memset(bytes, 'x', sizeof bytes);
    Error err;
    cr_assert_null(read_fed(bytes, sizeof bytes, 10000, NULL, &err));
    cr_assert_str_eq(err.msg, "expected at most 10000 bytes");
}

Test(readsecret, a_directory_says_it_cannot_be_read)
{
    int fd = open("/", O_RDONLY | O_DIRECTORY);
    cr_assert(fd >= 0);
    Error err;
    cr_assert_null(readsecret_fd(fd, 0, NULL, &err));
    close(fd);
    cr_assert_str_eq(err.msg, "cannot read: Is a directory");
}

Test(readsecret, free_accepts_null)
{
    readsecret_free(NULL, 0);
}
