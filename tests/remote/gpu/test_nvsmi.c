#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "remote/gpu/nvsmi.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

static size_t load_gpus(const char *file, GpuSample *out, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/nvidia-smi/%s", TUNEDECK_SOURCE_DIR, file);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "fixture %s", path);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        line[strcspn(line, "\n")] = 0;
        Error e;
        cr_assert_eq(nvsmi_parse_gpu_line(line, &out[n], &e), 0, "%s: %s", line, e.msg);
        n++;
    }
    fclose(f);
    return n;
}

Test(nvsmi, gpu_lines_of_the_fixture_parse)
{
    GpuSample g[8];
    size_t n = load_gpus("query-gpu.csv", g, 8);
    cr_assert_eq(n, 2);
    cr_assert_eq(g[0].index, 0);
    cr_assert_str_eq(g[0].uuid, "GPU-4c2e8a51-9d3f-7b1e-a6c0-2f5d8e9b1a73");
    cr_assert_str_eq(g[0].name, "NVIDIA A100-SXM4-40GB");
    cr_assert(g[0].has_util && g[0].has_mem_used && g[0].has_mem_total);
    cr_assert_float_eq(g[0].util_pct, 87, 1e-9);
    cr_assert_float_eq(g[0].mem_used_mib, 30521, 1e-9);
    cr_assert_float_eq(g[0].mem_total_mib, 40960, 1e-9);
    cr_assert_float_eq(g[1].util_pct, 0, 1e-9);
    cr_assert(g[1].has_util, "a real 0 %% is known, not unknown");
}

Test(nvsmi, not_available_fields_are_unknown_not_zero)
{
    GpuSample g[8];
    size_t n = load_gpus("query-gpu-mig.csv", g, 8);
    cr_assert_eq(n, 3);
    cr_assert(!g[0].has_util);
    cr_assert(g[0].has_mem_used);
    cr_assert(g[1].has_util && !g[1].has_mem_used && !g[1].has_mem_total);
    cr_assert(!g[2].has_util, "[Not Supported] is unknown");
    cr_assert_str_eq(g[2].name, "Tesla K80");
}

/* This test pinned the opposite: a line with its last fields missing was read, those fields
 * unknown, so a cut or garbled line showed a working GPU with no readings. With an explicit
 * query nvidia-smi prints every field ([N/A] for one it has not), so a short line is refused
 * like any bad line, its GPU named (listed in error at its index) and the count said. An
 * empty field is still unknown: the line has its six fields. */
Test(nvsmi, a_line_with_fields_missing_is_refused_not_read_as_unknowns)
{
    GpuSample g;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("3, GPU-abc, Tesla T4", &g, &e), -1,
                 "a line of 3 fields read as a GPU with unknown readings");
    cr_assert(strstr(e.msg, "(6 fields), found 3 fields"), "%s", e.msg);
    cr_assert_eq(g.index, 3, "the refused line's GPU is not named");
    cr_assert_str_eq(g.uuid, "GPU-abc");
    cr_assert_str_eq(g.error, e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("3, GPU-abc, Tesla T4, 10, 100", &g, &e), -1);
    cr_assert(strstr(e.msg, "found 5 fields"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("3, GPU-abc, Tesla T4, , , ", &g, &e), 0, "%s", e.msg);
    cr_assert(!g.has_util && !g.has_mem_used && !g.has_mem_total);
}

Test(nvsmi, garbage_is_an_error_naming_the_field)
{
    GpuSample g;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("x, GPU-abc, T4, 1, 2, 3", &g, &e), -1);
    cr_assert(strstr(e.msg, "index"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, lots, 2, 3", &g, &e), -1);
    cr_assert(strstr(e.msg, "utilization.gpu") && strstr(e.msg, "lots"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, 1234, T4, 1, 2, 3", &g, &e), -1);
    cr_assert(strstr(e.msg, "uuid"), "%s", e.msg);
    cr_assert_eq(
        nvsmi_parse_gpu_line("NVIDIA-SMI has failed because it couldn't communicate", &g, &e), -1);
}

Test(nvsmi, processes_join_gpus_on_uuid_not_index)
{
    GpuSample g[8];
    size_t n = load_gpus("query-gpu.csv", g, 8);
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/nvidia-smi/query-compute-apps.csv",
             TUNEDECK_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    line[strcspn(line, "\n")] = 0;
    GpuProcess p;
    Error e;
    cr_assert_eq(nvsmi_parse_app_line(line, &p, &e), 0, "%s", e.msg);
    cr_assert_eq(p.pid, 4242);
    cr_assert(p.has_used);
    cr_assert_float_eq(p.used_mib, 30500, 1e-9);
    /* Reverse the table: the join must still find GPU 0 by its UUID. */
    GpuSample rev[2] = {g[1], g[0]};
    cr_assert_eq(nvsmi_join(rev, n, &p), 1);
    cr_assert_eq(rev[nvsmi_join(rev, n, &p)].index, 0);
    GpuProcess stray = p;
    strcpy(stray.gpu_uuid, "GPU-gone");
    cr_assert_eq(nvsmi_join(g, n, &stray), -1);
}

Test(nvsmi, process_memory_not_available_is_unknown)
{
    GpuProcess p;
    Error e;
    cr_assert_eq(nvsmi_parse_app_line("77, GPU-abc, [N/A]", &p, &e), 0, "%s", e.msg);
    cr_assert(!p.has_used);
    cr_assert_eq(nvsmi_parse_app_line("No running processes found", &p, &e), -1);
}

/* Regression: an index past INT_MAX was cast to a negative int. */
Test(nvsmi, index_past_int_range_is_an_error)
{
    GpuSample g;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("4294967296, GPU-aaaa, Tesla, 1, 2, 3", &g, &e), -1);
    cr_assert(strstr(e.msg, "index") && strstr(e.msg, "4294967296"), "%s", e.msg);
}

Test(nvsmi, nan_utilization_is_an_error_not_a_value)
{
    GpuSample g;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-aaaa, Tesla, nan, 2, 3", &g, &e), -1);
    cr_assert(strstr(e.msg, "utilization.gpu"), "%s", e.msg);
}

/* A line with more fields than the query asks for was read from its first six (its first
 * three for a process): a ',' inside a field shifts every number after it, so the line is
 * refused, naming the count, rather than read off by one. */
Test(nvsmi, more_fields_than_the_query_is_an_error_not_read_off_by_one)
{
    GpuSample g;
    GpuProcess p;
    Error err;
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-a, NVIDIA A100, 80GB, 87, 30521, 40960", &g, &err),
                 -1);
    cr_assert(strstr(err.msg, "(6 fields), found 7 fields"), "%s", err.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-a, Tesla, 16, 87, 30521, 40960", &g, &err), -1,
                 "a name with a comma read 16 as its utilization");
    cr_assert_eq(nvsmi_parse_app_line("4242, GPU-a, 30500, 7", &p, &err), -1);
    cr_assert(strstr(err.msg, "(3 fields, the pid above 0), found 4 fields"), "%s", err.msg);
    cr_assert_eq(nvsmi_parse_app_line("4242, GPU-a, 30500", &p, &err), 0, "%s", err.msg);
    /* Regression: a process line of 2 fields (cut or garbled: nvidia-smi prints all 3) was
     * read as a process of unknown memory. */
    cr_assert_eq(nvsmi_parse_app_line("4242, GPU-a", &p, &err), -1,
                 "a short process line was taken");
    cr_assert(strstr(err.msg, "(3 fields, the pid above 0), found 2 fields"), "%s", err.msg);
    cr_assert_eq(nvsmi_parse_app_line("4242", &p, &err), -1);
}

Test(nvsmi, memory_used_above_total_or_a_total_of_zero_is_an_error)
{
    GpuSample g;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 10, 16000, 15360", &g, &e), -1);
    cr_assert(strstr(e.msg, "memory.used") && strstr(e.msg, "16000") && strstr(e.msg, "15360"),
              "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 10, 0, 0", &g, &e), -1);
    cr_assert(strstr(e.msg, "memory.total") && strstr(e.msg, "above 0"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 10, 15360, 15360", &g, &e), 0, "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 10, 16000, [N/A]", &g, &e), 0,
                 "an unknown total bounds nothing");
}

Test(nvsmi, hex_exponents_and_signs_are_errors_not_values)
{
    GpuSample g;
    GpuProcess p;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 0x10, 1, 2", &g, &e), -1);
    cr_assert(strstr(e.msg, "utilization.gpu") && strstr(e.msg, "0x10"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 1, 0x1p4, 100", &g, &e), -1);
    cr_assert(strstr(e.msg, "memory.used"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 1, 1e3, 2000", &g, &e), -1);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, +1, 1, 2", &g, &e), -1);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 1.5.2, 1, 2", &g, &e), -1);
    cr_assert_eq(nvsmi_parse_app_line("42, GPU-abc, 0x400", &p, &e), -1);
    cr_assert(strstr(e.msg, "used_memory"), "%s", e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("0, GPU-abc, T4, 37.5, 1024 MiB, 15360", &g, &e), 0, "%s",
                 e.msg);
    cr_assert_float_eq(g.util_pct, 37.5, 1e-9);
}

Test(nvsmi, a_line_longer_than_the_buffer_is_an_error_not_cut)
{
    /* cut at 511 bytes, "15360" would have read as "153" */
    char line[600];
    int pad = 511 - (int)strlen("0, GPU-abc, , 10, 100, 153");
    snprintf(line, sizeof line, "0, GPU-abc, %*s, 10, 100, 15360", pad, "T4");
    GpuSample g;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line(line, &g, &e), -1);
    cr_assert(strstr(e.msg, "at most 511 bytes"), "%s", e.msg);
    char app[600];
    snprintf(app, sizeof app, "42, GPU-%0*d, 100", 520, 7);
    GpuProcess p;
    cr_assert_eq(nvsmi_parse_app_line(app, &p, &e), -1);
    cr_assert(strstr(e.msg, "process line") && strstr(e.msg, "511"), "%s", e.msg);
}

/* nvidia-smi prints NVML's error in brackets where a failing GPU's number goes: any bracket
 * was read as unknown, so a lost GPU looked like a working one with no figures. Only texts
 * saying there is no such reading (for this user) are unknown now; the others refuse the line. */
Test(nvsmi, a_bracketed_error_is_refused_not_unknown)
{
    GpuSample g;
    GpuProcess p;
    Error e;
    cr_assert_eq(nvsmi_parse_gpu_line("2, GPU-abc, A100, 0, [GPU is lost], [GPU is lost]", &g, &e),
                 -1, "'[GPU is lost]' read as an unknown memory.used");
    cr_assert(strstr(e.msg, "memory.used") && strstr(e.msg, "'[GPU is lost]'"), "%s", e.msg);
    cr_assert_eq(g.index, 2, "the refused line's GPU is not named");
    cr_assert_str_eq(g.uuid, "GPU-abc");
    cr_assert_str_eq(g.error, e.msg);
    cr_assert_eq(nvsmi_parse_gpu_line("2, GPU-abc, A100, [Unknown Error], 1, 2", &g, &e), -1);
    cr_assert_eq(nvsmi_parse_gpu_line("2, GPU-abc, A100, [GPU requires reset], 1, 2", &g, &e), -1);
    cr_assert_eq(
        nvsmi_parse_gpu_line("2, GPU-abc, A100, [Insufficient Permissions], 1, 2", &g, &e), 0,
        "%s", e.msg);
    cr_assert(!g.has_util);
    cr_assert_str_empty(g.error);
    /* a process's memory: any bracket stays unknown (the process is still listed) */
    cr_assert_eq(nvsmi_parse_app_line("77, GPU-abc, [Unknown Error]", &p, &e), 0, "%s", e.msg);
    cr_assert(!p.has_used);
}
