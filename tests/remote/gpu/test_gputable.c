/* A host's GPU table from nvidia-smi lines: a GPU whose line is refused stays listed, in
 * error, at its index, with the refusal (field, what was read, what was expected). It was
 * dropped: the host showed one GPU fewer and nothing said why. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "remote/gpu/gputable.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

enum { CAP = 16 };

/* Every line of the fixture into the table, as one -lms period; returns the refused count. */
static int take_fixture(const char *file, GpuSample *gpus, size_t *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/nvidia-smi/%s", TUNEDECK_SOURCE_DIR, file);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "fixture %s", path);
    char line[512];
    int refused = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        Error e;
        if (gputable_take_line(gpus, n, CAP, line, &e) < 0) {
            cr_assert(e.msg[0], "a refusal without a reason: %s", line);
            refused++;
        }
    }
    fclose(f);
    return refused;
}

static void assert_error(const GpuSample *g, int index, const char *field, const char *found)
{
    cr_assert_eq(g->index, index, "GPU %d listed as %d", index, g->index);
    cr_assert(strstr(g->error, field) && strstr(g->error, found) && strstr(g->error, "expected"),
              "GPU %d: '%s' does not name %s, '%s' and what was expected", index, g->error,
              field, found);
}

Test(gputable, a_failing_gpu_stays_listed_in_error_at_its_index)
{
    GpuSample g[CAP];
    size_t n = 0;
    cr_assert_eq(take_fixture("query-gpu-failing.csv", g, &n), 5);
    cr_assert_eq(n, 6, "%zu GPUs listed of 6 lines: a refused line's GPU was dropped", n);
    cr_assert_eq(g[0].index, 0);
    cr_assert_str_empty(g[0].error);
    cr_assert_float_eq(g[0].util_pct, 87, 1e-9);
    assert_error(&g[1], 1, "utilization.gpu", "'[Unknown Error]'");
    cr_assert_str_eq(g[1].uuid, "GPU-b81f06d2-3e4a-5c97-d210-6a8f4e2c9b05");
    assert_error(&g[2], 2, "memory.used", "'[GPU is lost]'");
    assert_error(&g[3], 3, "memory.used", "'41000'");
    /* no index to read: listed, its index unknown, the whole line said */
    assert_error(&g[4], -1, "6 fields", "Unable to determine the device handle");
    /* cut inside "[N/A]": refused for its missing fields, at its index */
    assert_error(&g[5], 5, "(6 fields)", "found 4 fields");
    cr_assert_eq(gputable_readable(g, n), 1, "a GPU in error is not one to use");
}

Test(gputable, each_period_updates_the_same_gpus_and_a_gpu_that_answers_again_is_read)
{
    GpuSample g[CAP];
    size_t n = 0;
    take_fixture("query-gpu-failing.csv", g, &n);
    take_fixture("query-gpu-failing.csv", g, &n);
    cr_assert_eq(n, 6, "a second period listed %zu GPUs", n);
    Error e;
    cr_assert_eq(gputable_take_line(g, &n, CAP,
                                    "2, GPU-d3e1f7a0-6c52-48b9-a1e4-7f0c2b9d8e36, NVIDIA "
                                    "A100-SXM4-40GB, 4, 100, 40960",
                                    &e),
                 0, "%s", e.msg);
    cr_assert_eq(n, 6);
    cr_assert_str_empty(g[2].error);
    cr_assert_eq(gputable_readable(g, n), 2);
    /* a line whose uuid is refused still is its index's GPU, now in error */
    cr_assert_eq(gputable_take_line(g, &n, CAP, "0, [Unknown Error], A100, 1, 2, 3", &e), -1);
    cr_assert_eq(n, 6);
    assert_error(&g[0], 0, "uuid", "'[Unknown Error]'");
    cr_assert_eq(gputable_readable(g, n), 1);
}

Test(gputable, a_process_joins_no_gpu_whose_uuid_did_not_read)
{
    GpuSample g[CAP];
    size_t n = 0;
    Error e;
    gputable_take_line(g, &n, CAP, "0, [GPU is lost], A100, 1, 2, 3", &e);
    GpuProcess p = {.pid = 7};
    cr_assert_eq(nvsmi_join(g, n, &p), -1, "a process with no uuid joined the lost GPU");
}
