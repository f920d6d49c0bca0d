/* The generic peers as contenders: Optuna's samplers (and a numpy GP-EI) in a Python process,
 * bench/generic_peer.py (bench/optbench/pypeer.c), answering ask/tell/report. */
#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "bench/optbench/optbench.h"

const char *const PEER_SAMPLERS[N_PEER_SAMPLERS] = {"tpe", "cmaes", "gp-ei", "tpe-median"};
const char *const PEER_NAMES[N_PEER_SAMPLERS] = {"optuna-tpe", "optuna-cmaes", "generic-gp-ei",
                                                 "optuna-tpe-median"};

int peer_start(Peer *p, const char *python, const char *script, Error *err)
{
    memset(p, 0, sizeof *p);
    cJSON *hello = pypeer_start(&p->proc, python, script, err);
    if (!hello)
        return -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(hello, "optuna");
    snprintf(p->version, sizeof p->version, "%s",
             cJSON_IsString(v) ? v->valuestring : "not importable");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(hello, "samplers");
    for (int i = 0; i < N_PEER_SAMPLERS; i++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, PEER_SAMPLERS[i]);
        snprintf(p->sampler_note[i], sizeof p->sampler_note[i], "%s",
                 cJSON_IsString(n) ? n->valuestring : "not offered by the peer script");
    }
    cJSON_Delete(hello);
    return 0;
}

int peer_new_study(Bench *b, const Contender *k, const Cell *cell, uint64_t seed, Error *err)
{
    const Cluster *c = simcluster_cluster(cell->sim);
    char req[256];
    snprintf(req, sizeof req,
             "{\"op\":\"new\",\"sampler\":\"%s\",\"seed\":%llu,\"roles\":%zu,\"weights\":%zu}\n",
             PEER_SAMPLERS[k->peer_sampler], (unsigned long long)seed, c->n_machines, c->n_devices);
    cJSON *a = pypeer_call(&b->peer.proc, req, err);
    b->peer_pruning = a && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "pruner"));
    cJSON_Delete(a);
    return a ? 0 : -1;
}

Schedule *peer_ask(Bench *b, const Cell *cell, Error *err)
{
    return pypeer_ask(&b->peer.proc, simcluster_cluster(cell->sim), simcluster_job(cell->sim),
                      NULL, err);
}

int peer_tell(Bench *b, double value, int pruned, Error *err)
{
    char req[160];
    snprintf(req, sizeof req, "{\"op\":\"tell\",\"value\":%.17g,\"pruned\":%s}\n", value,
             pruned ? "true" : "false");
    cJSON *a = pypeer_call(&b->peer.proc, req, err);
    cJSON_Delete(a);
    return a ? 0 : -1;
}

int peer_report(Bench *b, int step, double value, Error *err)
{
    char req[160];
    snprintf(req, sizeof req, "{\"op\":\"report\",\"step\":%d,\"value\":%.17g}\n", step, value);
    cJSON *a = pypeer_call(&b->peer.proc, req, err);
    if (!a)
        return -1;
    int prune = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "prune"));
    cJSON_Delete(a);
    return prune;
}
