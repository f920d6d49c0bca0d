/* nvidia-smi csv parsing with explicit unknowns (nvtop keeps a validity bit per field). */
#include "remote/gpu/nvsmi.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FIELDS = 8 };

/* Splits on ',' in place, trimming spaces; returns the field count. */
static size_t split(char *s, char **f, size_t cap)
{
    size_t n = 0;
    for (char *p = s;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        while (isspace((unsigned char)*p))
            p++;
        char *e = p + strlen(p);
        while (e > p && isspace((unsigned char)e[-1]))
            *--e = 0;
        if (n < cap)
            f[n] = p;
        n++;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

/* Bracketed texts that say a GPU has no such reading, or not for this user: unknown, the GPU
 * fine. Any other ("[Unknown Error]", "[GPU is lost]", "[GPU requires reset]") is nvidia-smi
 * failing to read a GPU that should answer: refused, so the GPU is shown in error (gpuwatch),
 * not taken as a working GPU with unknown values, as every bracket was. */
static int no_reading(const char *text)
{
    return strcmp(text, "[N/A]") == 0 || strcmp(text, "[Not Supported]") == 0 ||
           strcmp(text, "[Insufficient Permissions]") == 0;
}

/* A number in [0, max], or unknown for no_reading's texts, "N/A" and empty fields (any
 * bracketed text when brackets_unknown: a process's memory, where "[Unknown Error]" costs
 * one process's figure, not a GPU). "nan", "inf" and negative values are refused: a value
 * marked known is a real one (found by tests/fuzz/fuzz_nvsmi.c: "-100" and "nan" were
 * accepted as a known utilization). So are hex ("0x10"), exponents and signs, which strtod
 * takes and nvidia-smi never prints: digits with at most one '.' only. */
static int number(const char *text, double max, int brackets_unknown, double *out, int *known,
                  const char *what, Error *err)
{
    *known = 0;
    *out = 0;
    if (!text[0] || strcmp(text, "N/A") == 0 || no_reading(text) ||
        (brackets_unknown && text[0] == '['))
        return 0;
    /* a '-' is let through to be refused by the range below, which says what fits */
    const char *num = text + (text[0] == '-');
    size_t digits = strspn(num, "0123456789.");
    const char *dot = memchr(num, '.', digits);
    if (!digits || (dot && memchr(dot + 1, '.', digits - (size_t)(dot + 1 - num))))
        return error_set(err, "%s: expected a number or [N/A], found '%s'", what, text);
    char *end;
    double v = strtod(text, &end);
    if (end != num + digits) /* "." alone, or strtod read past the digits */
        return error_set(err, "%s: expected a number or [N/A], found '%s'", what, text);
    while (*end == ' ')
        end++;
    /* Tolerate a unit when nounits was not honoured ("1024 MiB", "37 %"). */
    if (end == text || !isfinite(v) || (*end && strcmp(end, "MiB") != 0 && strcmp(end, "%") != 0))
        return error_set(err, "%s: expected a number or [N/A], found '%s'", what, text);
    if (v < 0 || v > max)
        return error_set(err, "%s: expected a number in [0, %g] or [N/A], found '%s'", what, max,
                         text);
    *out = v;
    *known = 1;
    return 0;
}

/* A line that does not fit the buffer is refused: cut, its last field would read as a
 * smaller number than nvidia-smi printed. */
static int line_fits(const char *line, size_t cap, const char *what, Error *err)
{
    size_t len = strlen(line);
    if (len < cap)
        return 0;
    return error_set(err, "nvidia-smi %s line '%.80s...': expected at most %zu bytes, found %zu",
                     what, line, cap - 1, len);
}

/* The GPU a line names, read before anything is refused so that a refused line still says
 * which GPU (gpuwatch lists it in error at its index): the index and the uuid when each reads,
 * else -1 and "". Only fields ended by a ',' inside the buffer count (a line cut at the
 * buffer's end has a partial last field). */
static void read_identity(char **f, size_t whole, GpuSample *out)
{
    char *end;
    long idx = whole > 0 ? strtol(f[0], &end, 10) : -1;
    if (whole > 0 && end != f[0] && !*end && idx >= 0 && idx <= INT_MAX)
        out->index = (int)idx;
    if (whole > 1 && (strncmp(f[1], "GPU-", 4) == 0 || strncmp(f[1], "MIG-", 4) == 0))
        snprintf(out->uuid, sizeof out->uuid, "%s", f[1]);
    if (whole > 2)
        snprintf(out->name, sizeof out->name, "%s", f[2]);
}

static int parse_gpu_line(const char *line, GpuSample *out, Error *err)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    char *f[MAX_FIELDS] = {0};
    size_t n = split(buf, f, MAX_FIELDS);
    int cut = strlen(line) >= sizeof buf;
    read_identity(f, cut ? n - 1 : n, out);
    if (line_fits(line, sizeof buf, "gpu", err) < 0)
        return -1;
    /* With an explicit query nvidia-smi prints every field, an unknown one as [N/A]: more
     * fields than asked for is a ',' in a name (every number after it shifted), fewer a cut
     * or garbled line. Both are refused, never read off by one nor as unknowns (a short line
     * was taken as a working GPU with no readings). */
    if (n != 6)
        return error_set(err,
                         "nvidia-smi gpu line '%.80s': expected index, uuid, name, "
                         "utilization, memory used, memory total (6 fields), found %zu fields",
                         line, n);
    if (out->index < 0)
        return error_set(err,
                         "nvidia-smi gpu line: index: expected a number in [0, %d], found '%s'",
                         INT_MAX, f[0]);
    if (!out->uuid[0])
        return error_set(err, "nvidia-smi gpu line: uuid: expected GPU-..., found '%s'", f[1]);
    int k;
    if (number(f[3], 100, 0, &out->util_pct, &k, "utilization.gpu", err) < 0)
        return -1;
    out->has_util = (unsigned)k;
    if (number(f[4], 1e9, 0, &out->mem_used_mib, &k, "memory.used", err) < 0)
        return -1;
    out->has_mem_used = (unsigned)k;
    if (number(f[5], 1e9, 0, &out->mem_total_mib, &k, "memory.total", err) < 0)
        return -1;
    out->has_mem_total = (unsigned)k;
    /* A GPU with no memory, or more in use than it has, is a wrong answer, not a reading. */
    if (out->has_mem_total && out->mem_total_mib <= 0)
        return error_set(err, "nvidia-smi gpu line: memory.total: expected above 0 MiB, found '%s'",
                         f[5]);
    if (out->has_mem_used && out->has_mem_total && out->mem_used_mib > out->mem_total_mib)
        return error_set(err,
                         "nvidia-smi gpu line: memory.used: expected at most memory.total (%s "
                         "MiB), found '%s'",
                         f[5], f[4]);
    return 0;
}

int nvsmi_parse_gpu_line(const char *line, GpuSample *out, Error *err)
{
    memset(out, 0, sizeof *out);
    out->index = -1;
    if (parse_gpu_line(line, out, err) == 0)
        return 0;
    snprintf(out->error, sizeof out->error, "%s", err->msg);
    return -1;
}

int nvsmi_parse_app_line(const char *line, GpuProcess *out, Error *err)
{
    memset(out, 0, sizeof *out);
    char buf[512];
    if (line_fits(line, sizeof buf, "process", err) < 0)
        return -1;
    snprintf(buf, sizeof buf, "%s", line);
    char *f[MAX_FIELDS] = {0};
    size_t n = split(buf, f, MAX_FIELDS);
    char *end;
    long pid = strtol(f[0], &end, 10);
    /* As for a GPU line: nvidia-smi prints every field asked for, so a line of 2 was cut or
     * garbled, and was read as a process of unknown memory. */
    if (n != 3 || end == f[0] || *end || pid <= 0)
        return error_set(err,
                         "nvidia-smi process line '%.80s': expected pid, gpu_uuid, "
                         "used_memory (3 fields, the pid above 0), found %zu fields",
                         line, n);
    out->pid = pid;
    snprintf(out->gpu_uuid, sizeof out->gpu_uuid, "%s", f[1]);
    int k;
    if (number(f[2], 1e9, 1, &out->used_mib, &k, "used_memory", err) < 0)
        return -1;
    out->has_used = (unsigned)k;
    return 0;
}

long nvsmi_join(const GpuSample *gpus, size_t n, const GpuProcess *p)
{
    for (size_t i = 0; i < n; i++) /* a GPU in error whose uuid did not read joins nothing */
        if (gpus[i].uuid[0] && strcmp(gpus[i].uuid, p->gpu_uuid) == 0)
            return (long)i;
    return -1;
}
