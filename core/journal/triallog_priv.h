/* What the trial log's writer (triallog.c) and its total bound (triallog_bound.c: the file
 * read back, and cut down to its bound) share: the log's state and the file's parts. */
#ifndef TUNEDECK_TRIALLOG_PRIV_H
#define TUNEDECK_TRIALLOG_PRIV_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "core/journal/triallog.h"

/* What the log knows of one trial, from this run's lines and the file read back. */
typedef struct {
    int trial;
    size_t lines;   /* printed, kept or left out within its part */
    int ended;      /* its "ended:" line is in the file */
    int failed;     /* it did not end ok or pruned */
    int left_out;   /* its whole part was left out to keep the total bound */
} TrialCount;

/* A stretch of the file: one trial's lines, or a note of whole trials left out
 * (trial == TRIALLOG_PART_NOTE, its trials in `gone`, the lines they had in gone_lines). */
enum { TRIALLOG_PART_NOTE = -1 };
typedef struct {
    int trial;
    off_t off;
    size_t bytes;
    int *gone;
    size_t n_gone, gone_lines;
} LogPart;

struct TrialLog {
    char path[4096];
    int fd;          /* -1 until the first line */
    int failed;      /* the file could not be made or written: nothing more is tried */
    char error[512];
    int written;
    size_t total_bytes; /* the bound on the whole file (TRIALLOG_TOTAL_BYTES) */
    off_t size;         /* of the file, as read back and written since */
    int torn;           /* the file read back ends without a newline (a killed write) */
    time_t now;         /* of the line being written, for a note's stamp */
    /* the trial whose lines come now */
    int trial;
    int have_trial, ended;
    size_t head_bytes;          /* written as they came */
    char **tail;                /* lines held for its end, oldest first from tail_first */
    size_t tail_first, tail_n, tail_cap, tail_bytes;
    size_t left_lines, left_bytes; /* dropped between head and tail */
    TrialCount *counts;
    size_t n_counts, cap_counts;
    LogPart *parts; /* the file, in order */
    size_t n_parts, cap_parts;
};

TrialCount *triallog_count_of(TrialLog *l, int trial, int add);
void triallog_fail(TrialLog *l, const char *what, int e);
size_t triallog_stamp(char *out, size_t cap, time_t now);
/* `len` bytes of trial `trial` were appended at offset `off`: its part grows, or begins. */
int triallog_part_add(TrialLog *l, int trial, off_t off, size_t len);
void triallog_parts_clear(TrialLog *l);

/* Reads back a file a run before this one wrote (a resume): its parts, each trial's count,
 * its size. Nothing when there is none; a file this session may not use is left for the
 * first write to refuse. */
void triallog_read_back(TrialLog *l);
/* Before `incoming` more bytes are appended: when they would take the file past its bound,
 * it is rewritten without the oldest parts but the latest and the failed trials. -1: the
 * file could not be rewritten (said in the log's error). */
int triallog_bound(TrialLog *l, size_t incoming);

#endif
