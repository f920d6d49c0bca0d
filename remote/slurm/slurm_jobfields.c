/* The field readers of `scontrol show -d job`'s lines (remote/slurm/slurm_jobfields.h):
 * words, numbers, items, TRES and GRES GPU counts and indices, node lists. Each reads a slice
 * of a line by its length, never past it: the text is Slurm's and other users' (fuzzed
 * through slurm_jobinfo_read). The records they fill are slurm_jobinfo.c's. */
#include "remote/slurm/slurm_jobfields.h"

#include <stdlib.h>
#include <string.h>

#include "core/model/hostrange.h"
#include "remote/slurm/slurm_joblimits.h"

void slurm_jobfields_copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

/* The value of `key=` among the line's space-separated words, as (start, length); NULL when
 * the key is not there. A key matches only at the start of a word, so "NodeList=" never
 * matches "ReqNodeList=". */
const char *slurm_jobfields_word(const char *line, size_t len, const char *key, size_t *vlen)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl <= len; i++) {
        if ((i == 0 || line[i - 1] == ' ') && memcmp(line + i, key, kl) == 0) {
            size_t e = i + kl;
            while (e < len && line[e] != ' ')
                e++;
            *vlen = e - i - kl;
            return line + i + kl;
        }
    }
    return NULL;
}

void slurm_jobfields_take(const char *line, size_t len, const char *key, char *dst, size_t cap)
{
    size_t vl;
    const char *v = slurm_jobfields_word(line, len, key, &vl);
    if (v)
        slurm_jobfields_copy(dst, cap, v, vl);
}

/* A non-negative decimal number, whole; -1 on anything else. */
int slurm_jobfields_number(const char *v, size_t len, long long *out)
{
    long long n = 0;
    if (!len || len > 18)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        n = n * 10 + (v[i] - '0');
    }
    *out = n;
    return 0;
}

/* The ','-separated item of v[0..len) that starts at *at, its length in *item_len; *at moves
 * past it. A ',' inside the pair of brackets `nest` names ("()", "[]"; "" for none) does not
 * separate: "gpu:2(IDX:0,1)" and "n[1-2,4]" are one item each. NULL once the items are
 * done. */
const char *slurm_jobfields_next_item(const char *v, size_t len, size_t *at, size_t *item_len,
                                      const char *nest)
{
    if (*at >= len)
        return NULL;
    size_t e = *at;
    int depth = 0;
    while (e < len && (depth || v[e] != ',')) {
        if (nest[0])
            depth += v[e] == nest[0] ? 1 : v[e] == nest[1] ? -1 : 0;
        e++;
    }
    const char *item = v + *at;
    *item_len = e - *at;
    *at = e + 1;
    return item;
}

/* The GPUs of a TRES request: "gres:gpu:2", "gres:gpu:v100:2", "gres/gpu=2" (several items
 * separated by ','; other GRES not counted). A count that is not a number, or more than
 * SLURM_JOBINFO_MAX_GPU_INDEX, is 0: what it asks for is not known, so nothing is kept
 * back for it. */
int slurm_jobfields_tres_gpus(const char *v, size_t len)
{
    int total = 0;
    size_t at = 0, il;
    for (const char *item; (item = slurm_jobfields_next_item(v, len, &at, &il, ""));) {
        if (il > 8 && (memcmp(item, "gres:gpu", 8) == 0 || memcmp(item, "gres/gpu", 8) == 0) &&
            (item[8] == ':' || item[8] == '=')) {
            size_t k = il;
            while (k > 8 && item[k - 1] >= '0' && item[k - 1] <= '9')
                k--;
            long long n;
            if ((item[k - 1] == ':' || item[k - 1] == '=') &&
                slurm_jobfields_number(item + k, il - k, &n) == 0 &&
                n <= SLURM_JOBINFO_MAX_GPU_INDEX * SLURM_JOBINFO_MAX_NODES)
                total += (int)n;
        }
    }
    return total;
}

/* The TYPE of the first "gres:gpu:TYPE:N" item of a TresPer* value, into out (kept when
 * none names one). */
void slurm_jobfields_tres_gpu_type(const char *v, size_t len, char *out, size_t cap)
{
    size_t at = 0, il;
    for (const char *item; (item = slurm_jobfields_next_item(v, len, &at, &il, ""));) {
        if (il > 9 && (memcmp(item, "gres:gpu:", 9) == 0 || memcmp(item, "gres/gpu:", 9) == 0)) {
            const char *last = item + il;
            while (last > item + 9 && last[-1] != ':' && last[-1] != '=')
                last--;
            if (last > item + 10) { /* a TYPE between "gres:gpu:" and ":N" */
                slurm_jobfields_copy(out, cap, item + 9, (size_t)(last - 1 - (item + 9)));
                return;
            }
        }
    }
}

/* "0-1,3" (up to the closing ')') into bits; -1 on anything else. */
static int parse_idx(const char *s, size_t len, uint64_t *mask)
{
    size_t i = 0;
    while (i < len) {
        long a = 0, b;
        size_t d = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && d < 6)
            a = a * 10 + (s[i++] - '0'), d++;
        if (!d)
            return -1;
        b = a;
        if (i < len && s[i] == '-') {
            i++;
            b = 0, d = 0;
            while (i < len && s[i] >= '0' && s[i] <= '9' && d < 6)
                b = b * 10 + (s[i++] - '0'), d++;
            if (!d || b < a)
                return -1;
        }
        if (b >= SLURM_JOBINFO_MAX_GPU_INDEX)
            return -1;
        for (long k = a; k <= b; k++)
            *mask |= (uint64_t)1 << k;
        if (i < len && s[i] != ',')
            return -1;
        i++;
    }
    return 0;
}

/* The GPU indices of a detail line's GRES value: "gpu:v100:2(IDX:0-1)", several items
 * separated by ',' outside the parentheses, only the gpu ones counted. */
int slurm_jobfields_gres_gpu_idx(const char *v, size_t len, uint64_t *mask)
{
    *mask = 0;
    size_t at = 0, il;
    for (const char *item; (item = slurm_jobfields_next_item(v, len, &at, &il, "()"));) {
        const char *idx = il > 3 ? memchr(item, '(', il) : NULL;
        if (il >= 3 && memcmp(item, "gpu", 3) == 0 &&
            (il == 3 || item[3] == ':' || item[3] == '(') && idx) {
            const char *in = idx + 1;
            size_t rest = il - (size_t)(in - item);
            if (rest > 4 && memcmp(in, "IDX:", 4) == 0) {
                const char *close = memchr(in, ')', rest);
                if (!close || parse_idx(in + 4, (size_t)(close - in - 4), mask) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* Expands a Slurm node list ("n[1-2],gpu07") into names: top-level commas separate
 * patterns, each one a bracket host range. */
int slurm_jobfields_expand_nodes(const char *list, size_t len, char ***names, size_t *n, Error *err)
{
    *names = NULL;
    *n = 0;
    size_t at = 0, il;
    for (const char *item; (item = slurm_jobfields_next_item(list, len, &at, &il, "[]"));) {
        char pat[512];
        if (il == 0 || il >= sizeof pat) {
            hostrange_free(*names, *n);
            return error_set(err, "expected node names, found '%.*s'", (int)(len > 80 ? 80 : len),
                             list);
        }
        slurm_jobfields_copy(pat, sizeof pat, item, il);
        char **part;
        size_t np;
        if (hostrange_expand(pat, &part, &np, err) < 0) {
            hostrange_free(*names, *n);
            return -1;
        }
        if (*n + np > SLURM_JOBINFO_MAX_NODES) {
            hostrange_free(part, np);
            hostrange_free(*names, *n);
            return error_set(err, "more than %d nodes in '%.40s'", SLURM_JOBINFO_MAX_NODES, list);
        }
        char **grown = realloc(*names, (*n + np) * sizeof *grown);
        if (!grown) {
            hostrange_free(part, np);
            hostrange_free(*names, *n);
            return error_set(err, "out of memory");
        }
        *names = grown;
        memcpy(grown + *n, part, np * sizeof *part);
        *n += np;
        free(part); /* the names now belong to *names */
    }
    return 0;
}
