/* `tunedeck hosts`' note of a host's GPUs in error: whole entries, then how many more. It was
 * cut at 2048 bytes wherever that landed, mid-word, and said nothing of the GPUs past it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cmd/gpu_errors.h"

/* A gpu_list as `hosts --json` gives it: n GPUs, every other one (odd index) in error with a
 * reason of about `len` bytes. */
static cJSON *gpu_list(int n, size_t len)
{
    cJSON *list = cJSON_CreateArray();
    for (int k = 0; k < n; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", k);
        if (k % 2) {
            char why[600];
            snprintf(why, sizeof why, "memory.used: expected a number or [N/A], found '%0*d'",
                     (int)len, k);
            cJSON_AddStringToObject(o, "error", why);
        } else {
            cJSON_AddNullToObject(o, "error");
        }
        cJSON_AddItemToArray(list, o);
    }
    return list;
}

static size_t count(const char *text, const char *what)
{
    size_t k = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        k++;
    return k;
}

Test(gpu_errors, entries_that_do_not_fit_are_counted_not_cut)
{
    cJSON *list = gpu_list(20, 300); /* 10 in error, ~350 bytes each: 5 fit in 2048 */
    char out[2048];
    gpu_errors_text(list, out, sizeof out);
    cr_assert_lt(strlen(out), sizeof out);
    const char *more = strstr(out, "; and ");
    cr_assert_not_null(more, "no count of the GPUs left out: '%s'", out);
    size_t left;
    cr_assert_eq(sscanf(more, "; and %zu more", &left), 1, "%s", more);
    size_t shown = count(out, "GPU ");
    cr_assert_eq(shown + left, 10, "%zu shown and %zu more of 10", shown, left);
    cr_assert_gt(shown, 0);
    cr_assert_eq(count(out, "')"), shown, "an entry was cut: '%s'", out);
    char tail[32];
    snprintf(tail, sizeof tail, "; and %zu more", left);
    cr_assert_str_eq(more, tail, "the note goes on past the count: '%s'", more);
    cJSON_Delete(list);
}

Test(gpu_errors, every_entry_is_listed_when_all_fit)
{
    cJSON *list = gpu_list(6, 3);
    char out[2048];
    cr_assert_str_eq(gpu_errors_text(list, out, sizeof out),
                     "GPU 1: error (memory.used: expected a number or [N/A], found '001'); "
                     "GPU 3: error (memory.used: expected a number or [N/A], found '003'); "
                     "GPU 5: error (memory.used: expected a number or [N/A], found '005')");
    cJSON_Delete(list);
}

/* A reason is outside text: made harmless per entry, so that the row's termsafe (which has the
 * same room) cuts nothing; an entry whose escapes do not fit is counted, not shown half. */
Test(gpu_errors, an_entry_is_measured_as_the_terminal_shows_it)
{
    cJSON *list = cJSON_CreateArray();
    for (int k = 0; k < 2; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", k);
        char why[400];
        memset(why, '\x1b', 300); /* each shown as ^[, twice its bytes */
        why[300] = 0;
        cJSON_AddStringToObject(o, "error", why);
        cJSON_AddItemToArray(list, o);
    }
    char out[700];
    gpu_errors_text(list, out, sizeof out);
    cr_assert_null(strchr(out, '\x1b'));
    cr_assert(strstr(out, "GPU 0: error (^[^["), "%s", out);
    cr_assert(strstr(out, "^[); and 1 more"), "%.60s...%s", out, out + strlen(out) - 20);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", "[GPU is lost]"); /* no index read */
    cJSON *one = cJSON_CreateArray();
    cJSON_AddItemToArray(one, o);
    cr_assert_str_eq(gpu_errors_text(one, out, sizeof out), "GPU ?: error ([GPU is lost])");
    cr_assert_str_eq(gpu_errors_text(list, out, 32), "2 GPUs in error", "none fits");
    cJSON_Delete(one);
    cJSON_Delete(list);
}
