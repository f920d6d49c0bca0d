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

/* Every line of the fixture into the table, as one -lms period; returns the refused count. */
static int take_fixture(const char *file, GpuTable *t)
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
        if (gputable_take_line(t, line, &e) < 0) {
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

/* A table as gpuwatch starts one: zeroed (static: it holds GPUTABLE_MAX samples). */
static GpuTable *empty_table(void)
{
    static GpuTable t;
    memset(&t, 0, sizeof t);
    return &t;
}

static void take(GpuTable *t, const char *line)
{
    Error e;
    gputable_take_line(t, line, &e);
}

Test(gputable, a_failing_gpu_stays_listed_in_error_at_its_index)
{
    GpuTable *t = empty_table();
    const GpuSample *g = t->gpus;
    cr_assert_eq(take_fixture("query-gpu-failing.csv", t), 5);
    cr_assert_eq(t->n, 6, "%zu GPUs listed of 6 lines: a refused line's GPU was dropped", t->n);
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
    cr_assert_eq(gputable_readable(t), 1, "a GPU in error is not one to use");
}

Test(gputable, each_period_updates_the_same_gpus_and_a_gpu_that_answers_again_is_read)
{
    GpuTable *t = empty_table();
    const GpuSample *g = t->gpus;
    take_fixture("query-gpu-failing.csv", t);
    take_fixture("query-gpu-failing.csv", t);
    cr_assert_eq(t->n, 6, "a second period listed %zu GPUs", t->n);
    Error e;
    cr_assert_eq(gputable_take_line(t,
                                    "2, GPU-d3e1f7a0-6c52-48b9-a1e4-7f0c2b9d8e36, NVIDIA "
                                    "A100-SXM4-40GB, 4, 100, 40960",
                                    &e),
                 0, "%s", e.msg);
    cr_assert_eq(t->n, 6);
    cr_assert_str_empty(g[2].error);
    cr_assert_eq(gputable_readable(t), 2);
    /* a line whose uuid is refused still is its index's GPU, now in error */
    cr_assert_eq(gputable_take_line(t, "0, [Unknown Error], A100, 1, 2, 3", &e), -1);
    cr_assert_eq(t->n, 6);
    assert_error(&g[0], 0, "uuid", "'[Unknown Error]'");
    cr_assert_eq(gputable_readable(t), 1);
}

/* A line with neither index nor uuid was the same GPU from period to period only by its
 * refusal's text: one whose text changed each period (here a number in the line) added an entry
 * each period, up to 64 a host, every one but the last a ghost. It is now the entry at its
 * place in the period. */
Test(gputable, a_line_naming_no_gpu_whose_text_changes_each_period_stays_one_entry)
{
    GpuTable *t = empty_table();
    const GpuSample *g = t->gpus;
    for (int period = 0; period < 5; period++) {
        char garbled[128];
        snprintf(garbled, sizeof garbled, "GPU 00000000:C1:00.0: Unknown Error after %d ms",
                 100 + period);
        take(t, "0, GPU-a, A100, 10, 1000, 40960");
        take(t, garbled);
        take(t, "2, GPU-c, A100, 20, 2000, 40960");
        cr_assert_eq(t->n, 3, "period %d: %zu GPUs listed of 3 lines", period, t->n);
        cr_assert_eq(g[1].index, -1);
        cr_assert(strstr(g[1].error, garbled), "period %d: '%s' is not the latest line", period,
                  g[1].error);
    }
    cr_assert_eq(g[0].index, 0);
    cr_assert_eq(g[2].index, 2);
    cr_assert_eq(gputable_readable(t), 2);
}

/* When the line naming no GPU is its period's first (nvidia-smi lists by bus id), no line
 * naming a GPU has begun the next period when it comes: in the first periods it is a GPU more
 * (the table cannot tell a period's first line from a GPU more at the end of the first
 * period). Once a line naming a GPU has begun a period, the one naming none is that period's
 * last, matched by its place: from the third period on the table holds the three GPUs. */
Test(gputable, a_first_line_naming_no_gpu_whose_text_changes_settles_to_one_entry)
{
    GpuTable *t = empty_table();
    for (int period = 0; period < 8; period++) {
        char garbled[128];
        snprintf(garbled, sizeof garbled, "GPU 00000000:01:00.0: Unknown Error after %d ms",
                 100 + period);
        take(t, garbled);
        if (period >= 3)
            cr_assert_eq(t->n, 3, "period %d: %zu GPUs after its first line", period, t->n);
        take(t, "1, GPU-b, A100, 10, 1000, 40960");
        take(t, "2, GPU-c, A100, 20, 2000, 40960");
        if (period >= 2)
            cr_assert_eq(t->n, 3, "period %d: %zu GPUs listed of 3 lines", period, t->n);
    }
    cr_assert_eq(gputable_readable(t), 2);
}

/* What the last period did not list is not shown: a GPU nvidia-smi stopped listing, and a
 * line naming no GPU that is gone, are dropped once the next period begins (the first GPU
 * listed again); a GPU listed for the first time is added. */
Test(gputable, a_gpu_the_last_period_did_not_list_is_dropped_when_the_next_begins)
{
    GpuTable *t = empty_table();
    const GpuSample *g = t->gpus;
    take(t, "0, GPU-a, A100, 10, 1000, 40960");
    take(t, "1, GPU-b, A100, 10, 1000, 40960");
    take(t, "Unable to determine the device handle for GPU 00000000:C1:00.0: Unknown Error");
    take(t, "3, GPU-d, A100, 10, 1000, 40960");
    cr_assert_eq(t->n, 4);
    take(t, "0, GPU-a, A100, 11, 1000, 40960"); /* the second period */
    take(t, "3, GPU-d, A100, 11, 1000, 40960");
    take(t, "4, GPU-e, A100, 11, 1000, 40960");
    cr_assert_eq(t->n, 5, "within a period, the last one's GPUs are kept until it ends");
    take(t, "0, GPU-a, A100, 12, 1000, 40960"); /* the third */
    cr_assert_eq(t->n, 3, "%zu GPUs listed: the ones the second period lost are kept", t->n);
    cr_assert_eq(g[0].index, 0);
    cr_assert_float_eq(g[0].util_pct, 12, 1e-9);
    cr_assert_eq(g[1].index, 3);
    cr_assert_eq(g[2].index, 4);
}

/* Every line naming no GPU, none of them changing: nothing marks a period, and each text
 * stays one entry, two lines alike one entry, as before. */
Test(gputable, lines_naming_no_gpu_with_the_same_texts_stay_one_entry_each)
{
    GpuTable *t = empty_table();
    for (int period = 0; period < 5; period++) {
        take(t, "Unable to determine the device handle for GPU 00000000:C1:00.0: Unknown Error");
        take(t, "Unable to determine the device handle for GPU 00000000:C2:00.0: Unknown Error");
        take(t, "Unable to determine the device handle for GPU 00000000:C2:00.0: Unknown Error");
    }
    cr_assert_eq(t->n, 2, "%zu entries of two texts", t->n);
    cr_assert(strstr(t->gpus[0].error, "C1:00.0") && strstr(t->gpus[1].error, "C2:00.0"));
}

/* Every GPU of a host falls off the bus: from then on no line names its GPU, nothing marks a
 * period, and lines whose text changes each period (the error, a count in it) added two
 * entries each period, up to 64, all but two ghosts. The last complete period had two lines,
 * and one -lms process lists as many every period: a line that would add a third entry begins
 * the next period, and the table holds two. */
Test(gputable, lines_naming_no_gpu_whose_texts_change_stay_as_many_as_the_last_period_had)
{
    GpuTable *t = empty_table();
    const GpuSample *g = t->gpus;
    for (int period = 0; period < 2; period++) {
        take(t, "0, GPU-a, A100, 10, 1000, 40960");
        take(t, "1, GPU-b, A100, 10, 1000, 40960");
    }
    for (int period = 0; period < 10; period++) {
        char first[128], second[128];
        snprintf(first, sizeof first, "GPU 00000000:C1:00.0: Unknown Error after %d ms", period);
        snprintf(second, sizeof second, "GPU 00000000:C2:00.0: Unknown Error after %d ms", period);
        take(t, first);
        take(t, second);
        if (period == 0)
            continue; /* the GPUs that named themselves are kept until a period ends */
        cr_assert_eq(t->n, 2, "period %d: %zu GPUs listed of 2 lines", period, t->n);
        cr_assert(strstr(g[0].error, first) && strstr(g[1].error, second),
                  "period %d: '%s', '%s' are not the latest lines", period, g[0].error, g[1].error);
    }
    cr_assert_eq(gputable_readable(t), 0);
    /* A new -lms process may list another count: the last one's bounds none of its periods. */
    gputable_new_process(t);
    cr_assert_eq(t->period_lines, 0);
}

/* nvidia-smi restarted after its process died mid-period (after one of two lines): the new
 * process's first line closed the dead one's half period as a complete one of one line, and
 * the GPU whose line names none was dropped, then counted as a GPU more. */
Test(gputable, a_period_cut_by_a_new_process_is_not_taken_as_complete)
{
    GpuTable *t = empty_table();
    char garbled[128];
    for (int period = 0; period < 3; period++) {
        snprintf(garbled, sizeof garbled, "GPU 00000000:C1:00.0: Unknown Error after %d ms",
                 period);
        take(t, "0, GPU-a, A100, 10, 1000, 40960");
        take(t, garbled);
    }
    take(t, "0, GPU-a, A100, 10, 1000, 40960"); /* and the process dies */
    gputable_new_process(t);
    for (int period = 0; period < 3; period++) {
        take(t, "0, GPU-a, A100, 10, 1000, 40960");
        cr_assert_eq(t->n, 2, "new process, period %d, first line: %zu GPUs", period, t->n);
        snprintf(garbled, sizeof garbled, "GPU 00000000:C1:00.0: Unknown Error after %d ms",
                 10 + period);
        take(t, garbled);
        cr_assert_eq(t->n, 2, "new process, period %d, second line: %zu GPUs", period, t->n);
    }
}

Test(gputable, a_process_joins_no_gpu_whose_uuid_did_not_read)
{
    GpuTable *t = empty_table();
    take(t, "0, [GPU is lost], A100, 1, 2, 3");
    GpuProcess p = {.pid = 7};
    cr_assert_eq(nvsmi_join(t->gpus, t->n, &p), -1, "a process with no uuid joined the lost GPU");
}
