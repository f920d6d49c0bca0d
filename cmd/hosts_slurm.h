/* `tunedeck hosts --slurm` (cmd/cmd_hosts_slurm.c), called by cmd_hosts. */
#ifndef TUNEDECK_HOSTS_SLURM_H
#define TUNEDECK_HOSTS_SLURM_H

typedef struct {
    const char *inventory; /* an inventory with "backend": "slurm", or NULL */
    const char *partition, *login;
    int json, accept, watch;
    double max_interval_s; /* --watch back-off cap */
    double watch_for_s;    /* --watch-for: stop after this long (0: until a signal) */
} HostsSlurmArgs;

/* Exit status (core/base/exitcode.h): 0; 1 when a node is drained or down; 3 for a bad
 * inventory; 4 when the controller or the login node did not answer. */
int hosts_slurm(const HostsSlurmArgs *a);

#endif
