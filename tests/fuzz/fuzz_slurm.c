/* Fuzzes Slurm's output (remote/slurm/slurm_nodes.c, slurm_nodestate.c, slurm_queue.c,
 * slurm_jobinfo.c and its field readers, slurm_jobfields.c): each input as `sinfo` (both
 * formats), `squeue` and `scontrol show -d job` output, and the inventory built from the
 * nodes. A controller's output is data only: nothing here may crash or leak, and a refusal
 * says why. */
#include "remote/slurm/slurm_jobinfo.h"
#include "remote/slurm/slurm_nodes.h"
#include "remote/slurm/slurm_nodestate.h"
#include "remote/slurm/slurm_queue.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    Error err;
    SlurmNodes nodes;
    if (slurm_nodes_parse(text, "sinfo", &nodes, &err) == 0) {
        for (size_t i = 0; i < nodes.n; i++) {
            const SlurmNode *n = &nodes.v[i];
            int kinds = 0;
            for (int k = 0; k < n->n_gpu_kinds; k++)
                kinds += n->gpu_kinds[k].count;
            if (n->cpus < 1 || n->gpus < 0 || n->mem_mb < 0 || n->cpus_alloc < 0 ||
                kinds != n->gpus)
                abort(); /* parsed counts are real ones; the types add up to the GPUs */
        }
        Cluster *c = nodes.n ? slurm_nodes_cluster(&nodes, "fuzz", 10, &err) : NULL;
        if (c && c->n_machines != nodes.n)
            abort();
        cluster_free(c);
        slurm_nodes_clear(&nodes);
    } else if (!err.msg[0]) {
        abort();
    }
    SlurmNodeStatuses st;
    if (slurm_nodestate_parse(text, "sinfo", &st, &err) == 0) {
        for (size_t i = 0; i < st.n; i++)
            if (slurm_nodestate_find(&st, st.v[i].name) != &st.v[i])
                abort(); /* one record a node, each found */
        slurm_nodestate_clear(&st);
    } else if (!err.msg[0]) {
        abort();
    }
    SlurmQueue q;
    if (slurm_queue_parse(text, "squeue", &q, &err) == 0) {
        for (size_t i = 0; i < q.n; i++)
            if (q.v[i].nodes < 0)
                abort();
        slurm_queue_clear(&q);
    } else if (!err.msg[0])
        abort();
    /* the watch's form: rows end in "|m1" (a short mark, so the fuzzer finds it) */
    if (slurm_queue_parse_marked(text, "m1", "squeue", &q, &err) == 0) {
        for (size_t i = 0; i < q.n; i++)
            if (q.v[i].nodes < 0)
                abort();
        slurm_queue_clear(&q);
    } else if (!err.msg[0])
        abort();
    SlurmJobInfoList jobs;
    if (slurm_jobinfo_parse(text, "scontrol", &jobs, &err) == 0) {
        for (size_t i = 0; i < jobs.n; i++) {
            const SlurmJobInfo *parts[4];
            char where[64]; /* short: the cut at a whole node is exercised too */
            size_t n = slurm_jobinfo_components(&jobs, jobs.v[i].id, parts, 4);
            slurm_jobinfo_where(parts, n < 4 ? n : 4, where, sizeof where);
            if (strlen(where) >= sizeof where || jobs.v[i].n_nodes > SLURM_JOBINFO_MAX_NODES)
                abort();
        }
        slurm_jobinfo_clear(&jobs);
    } else if (!err.msg[0]) {
        abort();
    }
    /* the live round's reading: every record kept, the doubtful ones marked and counted */
    Error doubt;
    if (slurm_jobinfo_read(text, "scontrol", &jobs, &doubt, &err) == 0) {
        size_t doubted = 0;
        for (size_t i = 0; i < jobs.n; i++) {
            const SlurmJobInfo *parts[4];
            size_t n = slurm_jobinfo_components(&jobs, jobs.v[i].id, parts, 4);
            for (size_t k = 0; k < n && k < 4; k++)
                if (parts[k]->doubtful)
                    abort();
            doubted += jobs.v[i].doubtful != 0;
        }
        if (doubted != jobs.n_doubtful || (doubted && !doubt.msg[0]))
            abort();
        slurm_jobinfo_clear(&jobs);
    } else if (!err.msg[0]) {
        abort();
    }
    free(text);
    return 0;
}
