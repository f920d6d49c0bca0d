/* The bounds of a job record read from `scontrol show -d job`: the records
 * (slurm_jobinfo.h) and the field readers that fill them (slurm_jobfields.h) both keep to
 * them, so they live below both. */
#ifndef TUNEDECK_SLURM_JOBLIMITS_H
#define TUNEDECK_SLURM_JOBLIMITS_H

enum {
    SLURM_JOBINFO_MAX_GPU_INDEX = 64, /* indices 0..63: one bit each */
    SLURM_JOBINFO_MAX_NODES = 4096    /* of one job (a node list that expands further is refused) */
};

#endif
