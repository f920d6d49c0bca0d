/* The field readers of `scontrol show -d job`'s lines (slurm_jobfields.c): a `Key=value`
 * word, a whole number, ','-separated items, the GPUs of a TRES request and of a detail
 * line's GRES, and a node list expanded. Only slurm_jobinfo.c, which reads the records,
 * uses them. Values are (start, length) slices of a line, never NUL-terminated. */
#ifndef TUNEDECK_SLURM_JOBFIELDS_H
#define TUNEDECK_SLURM_JOBFIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"

/* s[0..n) into dst, cut to cap - 1 bytes. */
void slurm_jobfields_copy(char *dst, size_t cap, const char *s, size_t n);
/* The value of the word `key=` (key ends in '='), as (start, *vlen); NULL when absent. */
const char *slurm_jobfields_word(const char *line, size_t len, const char *key, size_t *vlen);
/* The value of the word `key=` into dst (cut to cap); dst is left as it was when absent. */
void slurm_jobfields_take(const char *line, size_t len, const char *key, char *dst, size_t cap);
/* A non-negative decimal number, whole; -1 on anything else. */
int slurm_jobfields_number(const char *v, size_t len, long long *out);
/* The next ','-separated item of v[0..len) from *at, commas inside `nest`'s brackets kept
 * ("()", "[]", "" for none); NULL once the items are done. */
const char *slurm_jobfields_next_item(const char *v, size_t len, size_t *at, size_t *item_len,
                                      const char *nest);
/* The GPUs a TresPer* value asks for; 0 when not known. */
int slurm_jobfields_tres_gpus(const char *v, size_t len);
/* The GPU type a TresPer* value names, into out (kept when it names none). */
void slurm_jobfields_tres_gpu_type(const char *v, size_t len, char *out, size_t cap);
/* The GPU indices of a detail line's GRES value into *mask; -1 when it is not one. */
int slurm_jobfields_gres_gpu_idx(const char *v, size_t len, uint64_t *mask);
/* A Slurm node list ("n[1-2],gpu07") into *n names (hostrange_free them); -1 with err when
 * it is not one or holds more than SLURM_JOBINFO_MAX_NODES. */
int slurm_jobfields_expand_nodes(const char *list, size_t len, char ***names, size_t *n,
                                 Error *err);

#endif
