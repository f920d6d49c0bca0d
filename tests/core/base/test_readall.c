#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/readall.h"

static char *temp_with(const char *bytes, size_t n)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/tunedeck-readall.XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    return path;
}

Test(readall, file_larger_than_the_first_buffer_is_read_whole)
{
    size_t n = 100000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    char *path = temp_with(big, n);
    size_t len = 0;
    Error e;
    char *text = readall_file(path, 0, &len, &e);
    remove(path);
    cr_assert_not_null(text, "%s", e.msg);
    cr_assert_eq(len, n);
    cr_assert(memcmp(text, big, n) == 0 && text[n] == 0);
    free(text);
    free(big);
}

Test(readall, nul_byte_shows_in_the_length)
{
    char *path = temp_with("ab\0cd", 5);
    size_t len = 0;
    Error e;
    char *text = readall_file(path, 0, &len, &e);
    remove(path);
    cr_assert_eq(len, 5);
    cr_assert_eq(strlen(text), 2);
    free(text);
}

/* Regression: a directory read as an empty file ("empty file, expected a header line"). */
Test(readall, directory_is_refused_with_the_reason)
{
    Error e;
    cr_assert_null(readall_file("/tmp", 0, NULL, &e));
    cr_assert(strstr(e.msg, "/tmp: cannot read: Is a directory"), "%s", e.msg);
}

Test(readall, missing_file_names_the_path)
{
    Error e;
    cr_assert_null(readall_file("/nonexistent/x.json", 0, NULL, &e));
    cr_assert(strstr(e.msg, "/nonexistent/x.json: cannot open"), "%s", e.msg);
}

Test(readall, stream_over_the_limit_is_refused)
{
    char *path = temp_with("0123456789", 10);
    Error e;
    char *text = readall_file(path, 9, NULL, &e);
    cr_assert_null(text);
    cr_assert(strstr(e.msg, "expected at most 9 bytes"), "%s", e.msg);
    text = readall_file(path, 10, NULL, &e);
    remove(path);
    cr_assert_str_eq(text, "0123456789");
    free(text);
}
