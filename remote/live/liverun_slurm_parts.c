/* The other partitions' node lists, for other users' pending jobs there (partitions may
 * share nodes: a job of partition debug pending for n1, n2 of partition t4 takes GPUs of
 * ours just as a job of t4 does; liverun_slurm_pending.c). One `sinfo -a -h -o '%R|%N'`, a
 * line per partition (-a: hidden ones and those our group may not use too, which are
 * exactly other users'), on the node round's clock (every node_poll_s) and only while the
 * last job round holds such a job with neither a plan nor -w nodes (those name the nodes
 * it takes): with `--partition` given, and no such job, it costs no call. A failed or
 * unreadable one keeps the lists as last read, its reason said once (until it changes); the
 * job rounds say when the controller is away. A list that does not read is said the same
 * way, and holds none of our nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/liverun_slurm_priv.h"

int liveslurm_partitions_parse(const char *text, const char *source, LiveSlurmPartition **out,
                               size_t *n, Error *err)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0, line_no = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        const char *line = p;
        p += len + (p[len] == '\n');
        line_no++;
        if (!len)
            continue;
        const char *bar = memchr(line, '|', len);
        size_t name_len = bar ? (size_t)(bar - line) : 0;
        /* %R writes "debug"; %P (and older sinfo's %R, by some accounts) "debug*" for the
         * default partition: either is read */
        if (name_len && line[name_len - 1] == '*')
            name_len--;
        if (!bar || !name_len || name_len >= sizeof(*out)->name) {
            liveslurm_partitions_free(*out, *n);
            *out = NULL, *n = 0;
            return error_set(err, "%s line %zu: expected PARTITION|NODELIST", source, line_no);
        }
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            LiveSlurmPartition *grown = realloc(*out, nc * sizeof *grown);
            if (!grown) {
                liveslurm_partitions_free(*out, *n);
                *out = NULL, *n = 0;
                return error_set(err, "out of memory");
            }
            *out = grown, cap = nc;
        }
        LiveSlurmPartition *q = &(*out)[*n];
        memcpy(q->name, line, name_len);
        q->name[name_len] = 0;
        const char *nodes = bar + 1;
        size_t nodes_len = len - (size_t)(bar - line) - 1;
        /* a partition with no nodes (shown now that -a lists every one): "", or "n/a" and
         * "(null)" as sinfo versions write it, is kept as "" and holds none of ours */
        if ((nodes_len == 3 && memcmp(nodes, "n/a", 3) == 0) ||
            (nodes_len == 6 && memcmp(nodes, "(null)", 6) == 0))
            nodes_len = 0;
        if (!(q->nodes = strndup(nodes, nodes_len))) {
            liveslurm_partitions_free(*out, *n);
            *out = NULL, *n = 0;
            return error_set(err, "out of memory");
        }
        (*n)++;
    }
    return 0;
}

void liveslurm_partitions_free(LiveSlurmPartition *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].nodes);
    free(v);
}

/* A pending job of another user, in another partition than ours, that Slurm may start now
 * and that names no nodes: only its partition's node list says whether it may take ours. */
static int wants_partitions(const LiveSlurm *s)
{
    if (!s->o.partition[0])
        return 0;
    size_t pl = strlen(s->o.partition);
    for (size_t k = 0; k < s->jobs.n; k++) {
        const SlurmJobInfo *j = &s->jobs.v[k];
        if (strcmp(j->state, "PENDING") != 0 || j->sched_nodes[0] || j->req_nodes[0] ||
            !liveslurm_pending_may_start(j) ||
            !(j->gpus_per_node || j->gpus_per_job || j->gpus_per_task))
            continue;
        int ours = 0;
        for (const char *p = j->partition; *p && !ours;) {
            size_t l = strcspn(p, ",");
            ours = l == pl && memcmp(p, s->o.partition, pl) == 0;
            p += l + (p[l] == ',');
        }
        if (!ours && liveslurm_is_foreign(s, j))
            return 1;
    }
    return 0;
}

int liveslurm_partitions_unreadable(const LiveSlurmPartition *v, size_t n, char *why, size_t cap)
{
    for (size_t k = 0; k < n; k++) {
        Error err;
        if (v[k].nodes[0] && slurm_nodelist_contains(v[k].nodes, "", &err) < 0) {
            snprintf(why, cap, "partition %s's node list: %s", v[k].name, err.msg);
            return 1;
        }
    }
    return 0;
}

/* Said once until it changes ("" once all is read again). */
static void parts_trouble(LiveSlurm *s, const char *why)
{
    if (strcmp(s->parts_said, why) == 0)
        return;
    snprintf(s->parts_said, sizeof s->parts_said, "%s", why);
    if (why[0])
        liveslurm_say(s,
                      "sinfo's partitions (for other users' pending jobs): %s; "
                      "a list not read holds none of our nodes",
                      why);
}

static void collect_parts(LiveSlurm *s)
{
    if (!liveslurm_call_poll(s->part_round))
        return;
    char *text = NULL;
    Error err;
    LiveSlurmPartition *v;
    size_t n;
    int rc = slurm_call_finish(s->part_round, &text, &err);
    s->part_round = NULL;
    if (rc == 0 && liveslurm_partitions_parse(text, "sinfo", &v, &n, &err) == 0) {
        char why[sizeof s->parts_said] = "";
        liveslurm_partitions_unreadable(v, n, why, sizeof why);
        parts_trouble(s, why);
        liveslurm_partitions_free(s->parts, s->n_parts);
        s->parts = v;
        s->n_parts = n;
        liveslurm_count_holds(s); /* the claims with the lists just read */
    } else if (!s->down) {
        /* (an away controller is the job rounds' to say) */
        char why[sizeof s->parts_said];
        snprintf(why, sizeof why, "%s (the lists as last read are kept)", err.msg);
        parts_trouble(s, why);
    }
    free(text);
}

void liveslurm_parts_tick(LiveSlurm *s, int64_t now)
{
    if (s->part_round) {
        collect_parts(s);
        return;
    }
    if (s->down || !s->names ||
        (s->last_part_round_ms >= 0 && now - s->last_part_round_ms < s->o.node_poll_s * 1000) ||
        !wants_partitions(s))
        return;
    const char *argv[] = LIVESLURM_PARTITIONS_ARGV;
    Error err;
    s->last_part_round_ms = now;
    if (!(s->part_round = slurm_call_start(s->o.ctl, argv, &err)))
        return; /* the job rounds find the controller away and say so */
    collect_parts(s);
}

void liveslurm_parts_free(LiveSlurm *s)
{
    slurm_call_free(s->part_round);
    s->part_round = NULL;
    liveslurm_partitions_free(s->parts, s->n_parts);
    s->parts = NULL;
    s->n_parts = 0;
}
