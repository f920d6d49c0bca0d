/* Fuzzes nvidia-smi's csv lines (remote/gpu/nvsmi.c): every input line as a --query-gpu line and
 * as a --query-compute-apps line, then processes joined to GPUs. Unknown is a flag, never 0. */
#include "remote/gpu/nvsmi.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    GpuSample gpus[16];
    size_t n_gpus = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        Error err;
        GpuSample g;
        GpuProcess p;
        if (nvsmi_parse_gpu_line(line, &g, &err) == 0) {
            if ((g.has_util && !(g.util_pct >= 0 && g.util_pct <= 100)) ||
                (g.has_mem_total && !(g.mem_total_mib > 0)) ||
                (g.has_mem_used && g.has_mem_total && g.mem_used_mib > g.mem_total_mib))
                abort(); /* a value marked known must be a real one */
            if (n_gpus < 16)
                gpus[n_gpus++] = g;
        } else if (!err.msg[0] || strcmp(g.error, err.msg) != 0 || g.index < -1) {
            abort(); /* a refused GPU is listed in error: its reason is the refusal's */
        }
        if (nvsmi_parse_app_line(line, &p, &err) == 0) {
            long gi = nvsmi_join(gpus, n_gpus, &p);
            if (gi < -1 || gi >= (long)n_gpus)
                abort();
        } else if (!err.msg[0]) {
            abort();
        }
    }
    free(text);
    return 0;
}
