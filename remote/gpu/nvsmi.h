/* nvidia-smi's csv output (--format=csv,noheader,nounits), parsed: one GPU per
 * --query-gpu=index,uuid,name,utilization.gpu,memory.used,memory.total line, one process
 * per --query-compute-apps=pid,gpu_uuid,used_memory line. "[N/A]", "[Not Supported]",
 * "[Insufficient Permissions]" and empty fields are unknown (a validity flag), never zero;
 * another bracketed text in a GPU line ("[GPU is lost]", "[Unknown Error]") is refused, as is
 * a bad number, and a GPU line of more or fewer fields than the query asks for (a comma inside
 * one shifts the numbers; a short line is cut or garbled: nvidia-smi prints every field it is
 * asked for); so is a process line of other than 3 fields. Processes join GPUs on UUID: indices can
 * differ between the two queries (CUDA_VISIBLE_DEVICES, MIG). */
#ifndef TUNEDECK_NVSMI_H
#define TUNEDECK_NVSMI_H

#include <stddef.h>

#include "core/base/error.h"

#define NVSMI_QUERY_GPU "index,uuid,name,utilization.gpu,memory.used,memory.total"
#define NVSMI_QUERY_APPS "pid,gpu_uuid,used_memory"

typedef struct {
    int index;      /* -1: not read (a refused line whose index field is not one) */
    char uuid[96];  /* "": not read */
    char name[96];
    double util_pct, mem_used_mib, mem_total_mib;
    unsigned has_util : 1, has_mem_used : 1, has_mem_total : 1;
    /* "" for a GPU read; else why its line was refused (field, what was read, what was
     * expected). gpuwatch lists such a GPU so that it is seen, never as one to use. */
    char error[ERROR_MSG_MAX];
} GpuSample;

typedef struct {
    long pid;
    char gpu_uuid[96];
    double used_mib;
    unsigned has_used : 1;
} GpuProcess;

/* -1 with err when the line is refused; out then holds the index, uuid and name as far as
 * they read, and err's text as its error. */
int nvsmi_parse_gpu_line(const char *line, GpuSample *out, Error *err);
int nvsmi_parse_app_line(const char *line, GpuProcess *out, Error *err);

/* The GPU (index into gpus) a process runs on, by UUID; -1 when none matches (a GPU whose
 * uuid did not read matches none). */
long nvsmi_join(const GpuSample *gpus, size_t n, const GpuProcess *p);

#endif
