/* Checkpoint file: "TDCKPT01", a little-endian header, the parameters as doubles, and a
 * CRC-32 (IEEE 802.3 polynomial) of everything before it. */
#include "tools/worker/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/dirsync.h"
#include "tools/worker/lebytes.h"

static const char MAGIC[8] = {'T', 'D', 'C', 'K', 'P', 'T', '0', '1'};
enum { HEADER_BYTES = 8 + 8 * 6 + 8 * (DENSENET_MAX_LAYERS + 1) };

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

int checkpoint_save(const char *path, const Checkpoint *c, Error *err)
{
    size_t n = c->net.n_params;
    size_t total = HEADER_BYTES + 8 * n + 4;
    unsigned char *buf = calloc(1, total);
    if (!buf)
        return error_set(err, "%s: out of memory for a %zu-byte checkpoint", path, total);
    unsigned char *p = buf;
    memcpy(p, MAGIC, 8);
    p += 8;
    le_put64(p, c->net.n_layers), p += 8;
    le_put64(p, c->step), p += 8;
    le_put64(p, c->examples), p += 8;
    le_put64(p, c->data_seed), p += 8;
    le_put64(p, le_double_bits(c->loss)), p += 8;
    le_put64(p, c->workers), p += 8;
    for (size_t l = 0; l <= DENSENET_MAX_LAYERS; l++, p += 8)
        le_put64(p, l <= c->net.n_layers ? c->net.sizes[l] : 0);
    for (size_t i = 0; i < n; i++, p += 8)
        le_put64(p, le_double_bits(c->params[i]));
    uint32_t crc = crc32_update(0, buf, total - 4);
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(crc >> (8 * i));

    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(buf);
        return error_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    }
    size_t done = 0;
    while (done < total) {
        ssize_t w = write(fd, buf + done, total - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            free(buf);
            return error_set(err, "%s: write failed: %s", tmp, strerror(e));
        }
        done += (size_t)w;
    }
    free(buf);
    if (fsync(fd) < 0 || close(fd) < 0) {
        unlink(tmp);
        return error_set(err, "%s: cannot flush: %s", tmp, strerror(errno));
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return error_set(err, "%s: cannot rename into place: %s", path, strerror(e));
    }
    /* The new name is an entry of the folder: without the folder's fsync a power loss can
     * bring back the old checkpoint (or none) although this one's bytes reached the disk. */
    if (dirsync_parent(path) < 0)
        return error_set(err, "%s: cannot sync the folder that holds it: %s", path,
                         strerror(errno));
    return 0;
}

int checkpoint_check_writable(const char *path, Error *err)
{
    if (!path[0])
        return error_set(err, "expected a checkpoint file, found ''");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return error_set(err, "%s: names a folder, expected a checkpoint file", path);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) /* one left by a crash: checkpoint_save truncates it */
        return error_set(err, "%s: cannot be written there: %s: %s", path, tmp, strerror(errno));
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    return 0;
}

/* checkpoint_load's reading; *no_memory says a failure was this process's, not the file's. */
static int load(const char *path, Checkpoint *c, int *no_memory, Error *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f)
        return error_set(err, "%s: cannot open checkpoint: %s", path, strerror(errno));
    struct stat st; /* a directory opens, and its ftell is no size */
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return error_set(err, "%s: cannot read checkpoint: %s", path, strerror(EISDIR));
    }
    if (fseek(f, 0, SEEK_END) < 0) {
        fclose(f);
        return error_set(err, "%s: cannot seek: %s", path, strerror(errno));
    }
    long len = ftell(f);
    rewind(f);
    if (len < HEADER_BYTES + 4 || len > (1L << 34)) {
        fclose(f);
        return error_set(err, "%s: expected a checkpoint of at least %d bytes, found %ld", path,
                         HEADER_BYTES + 4, len);
    }
    unsigned char *buf = malloc((size_t)len);
    if (!buf) {
        fclose(f);
        *no_memory = 1;
        return error_no_memory(err, "%s: %ld bytes", path, len);
    }
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        fclose(f);
        return error_set(err, "%s: cannot read %ld bytes", path, len);
    }
    fclose(f);
    int rc = -1;
    const unsigned char *p = buf;
    if (memcmp(p, MAGIC, 8) != 0) {
        error_set(err,
                  "%s: expected a tunedeck checkpoint (magic TDCKPT01), found other "
                  "bytes",
                  path);
        goto out;
    }
    uint32_t stored = 0;
    for (int i = 0; i < 4; i++)
        stored |= (uint32_t)buf[len - 4 + i] << (8 * i);
    uint32_t crc = crc32_update(0, buf, (size_t)len - 4);
    if (crc != stored) {
        error_set(err,
                  "%s: checksum mismatch (stored %08x, computed %08x): the file is "
                  "corrupt or truncated",
                  path, stored, crc);
        goto out;
    }
    p += 8;
    uint64_t layers = le_get64(p);
    p += 8;
    if (layers < 1 || layers > DENSENET_MAX_LAYERS) {
        error_set(err, "%s: field 'layers': expected 1 to %d, found %llu", path,
                  DENSENET_MAX_LAYERS, (unsigned long long)layers);
        goto out;
    }
    c->step = le_get64(p), p += 8;
    c->examples = le_get64(p), p += 8;
    c->data_seed = le_get64(p), p += 8;
    c->loss = le_bits_double(le_get64(p)), p += 8;
    c->workers = (uint32_t)le_get64(p), p += 8;
    size_t sizes[DENSENET_MAX_LAYERS + 1];
    for (size_t l = 0; l <= DENSENET_MAX_LAYERS; l++, p += 8)
        sizes[l] = (size_t)le_get64(p);
    if (densenet_init(&c->net, sizes, (size_t)layers + 1, err) < 0) {
        error_prefix(err, "%s", path);
        goto out;
    }
    if ((uint64_t)len != HEADER_BYTES + 8 * (uint64_t)c->net.n_params + 4) {
        error_set(err, "%s: expected %zu parameters for its layer sizes, found %ld bytes", path,
                  c->net.n_params, len);
        goto out;
    }
    c->params = malloc(c->net.n_params * sizeof(double));
    if (!c->params) {
        *no_memory = 1;
        error_set(err, "%s: out of memory", path);
        goto out;
    }
    for (size_t i = 0; i < c->net.n_params; i++, p += 8)
        c->params[i] = le_bits_double(le_get64(p));
    rc = 0;
out:
    free(buf);
    return rc;
}

/* A checkpoint that is missing, unreadable or not one is a bad input file (exit 3), as every
 * other file tunedeck reads: `--resume FILE` of a missing FILE exited 1, the code of a job that
 * ran and failed. */
int checkpoint_load(const char *path, Checkpoint *c, Error *err)
{
    int no_memory = 0;
    if (load(path, c, &no_memory, err) == 0)
        return 0;
    return no_memory ? -1 : error_mark(err, ERROR_INPUT);
}

void checkpoint_clear(Checkpoint *c)
{
    free(c->params);
    c->params = NULL;
}
