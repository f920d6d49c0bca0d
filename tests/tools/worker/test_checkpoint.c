#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/worker/checkpoint.h"

static void make(Checkpoint *c)
{
    memset(c, 0, sizeof *c);
    size_t sizes[] = {6, 5, 3};
    cr_assert_eq(densenet_init(&c->net, sizes, 3, NULL), 0);
    c->step = 1234;
    c->examples = 99999;
    c->data_seed = 42;
    c->loss = 0.8125;
    c->workers = 3;
    c->params = malloc(c->net.n_params * sizeof(double));
    densenet_init_params(&c->net, c->params, 5);
}

static void temp_path(char *out, size_t cap)
{
    snprintf(out, cap, "/tmp/tunedeck-ckpt-test-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(out);
    cr_assert(fd >= 0);
    close(fd);
}

Test(checkpoint, round_trips_every_field)
{
    Checkpoint c, back;
    make(&c);
    char path[128];
    temp_path(path, sizeof path);
    Error e;
    cr_assert_eq(checkpoint_save(path, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(checkpoint_load(path, &back, &e), 0, "%s", e.msg);
    cr_assert_eq(back.step, 1234);
    cr_assert_eq(back.examples, 99999);
    cr_assert_eq(back.data_seed, 42);
    cr_assert_eq(back.loss, 0.8125);
    cr_assert_eq(back.workers, 3);
    cr_assert_eq(back.net.n_layers, 2);
    cr_assert_eq(back.net.sizes[1], 5);
    cr_assert_eq(back.net.n_params, c.net.n_params);
    cr_assert(memcmp(back.params, c.params, c.net.n_params * sizeof(double)) == 0);
    checkpoint_clear(&back);
    checkpoint_clear(&c);
    unlink(path);
}

static void corrupt_and_expect(long at, int truncate_to, const char *frag)
{
    Checkpoint c, back;
    make(&c);
    char path[128];
    temp_path(path, sizeof path);
    cr_assert_eq(checkpoint_save(path, &c, NULL), 0);
    if (truncate_to >= 0) {
        cr_assert_eq(truncate(path, truncate_to), 0);
    } else {
        FILE *f = fopen(path, "r+b");
        fseek(f, at, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(ch ^ 0x10, f);
        fclose(f);
    }
    Error e;
    cr_assert_eq(checkpoint_load(path, &back, &e), -1, "a corrupt file was accepted");
    cr_assert_null(back.params);
    cr_assert(strstr(e.msg, path), "message '%s' does not name the file", e.msg);
    cr_assert(strstr(e.msg, frag), "message '%s' lacks '%s'", e.msg, frag);
    cr_assert_eq(e.kind, ERROR_INPUT, "a corrupt checkpoint is not bad input: '%s'", e.msg);
    checkpoint_clear(&c);
    unlink(path);
}

Test(checkpoint, a_flipped_parameter_bit_is_refused)
{
    corrupt_and_expect(200, -1, "checksum");
}

Test(checkpoint, a_flipped_magic_is_refused)
{
    corrupt_and_expect(0, -1, "magic");
}

Test(checkpoint, a_truncated_file_is_refused)
{
    corrupt_and_expect(0, 150, "checksum");
    corrupt_and_expect(0, 20, "at least");
}

Test(checkpoint, a_missing_file_is_refused)
{
    Checkpoint back;
    Error e;
    cr_assert_eq(checkpoint_load("/nonexistent/ckpt", &back, &e), -1);
    cr_assert(strstr(e.msg, "/nonexistent/ckpt"));
    /* Regression: --resume of a missing file exited 1 (a job that ran and failed), every
     * other missing input file 3 (bad input). */
    cr_assert_eq(e.kind, ERROR_INPUT);
}

/* Regression: --resume DIR said "expected a checkpoint of at least 132 bytes, found
 * 9223372036854775807" (a directory's ftell). */
Test(checkpoint, a_directory_is_refused_as_one)
{
    Checkpoint back;
    Error e;
    cr_assert_eq(checkpoint_load("/tmp", &back, &e), -1);
    cr_assert_str_eq(e.msg, "/tmp: cannot read checkpoint: Is a directory");
    cr_assert_eq(e.kind, ERROR_INPUT);
}

/* Regression: a job whose --checkpoint could not be written (an empty path, a folder that is
 * not there) trained until its stop and only then failed, the training lost. */
Test(checkpoint, a_place_that_cannot_take_a_checkpoint_is_refused_before_training)
{
    Error e;
    cr_assert_eq(checkpoint_check_writable("", &e), -1);
    cr_assert_str_eq(e.msg, "expected a checkpoint file, found ''");
    cr_assert_eq(checkpoint_check_writable("/tmp", &e), -1);
    cr_assert_str_eq(e.msg, "/tmp: names a folder, expected a checkpoint file");
    cr_assert_eq(checkpoint_check_writable("/nonexistent/x.ckpt", &e), -1);
    cr_assert_str_eq(e.msg,
                     "/nonexistent/x.ckpt: cannot be written there: /nonexistent/x.ckpt.tmp: "
                     "No such file or directory");
    char path[64], tmp[80];
    temp_path(path, sizeof path);
    unlink(path);
    cr_assert_eq(checkpoint_check_writable(path, &e), 0, "%s", e.msg);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_assert_neq(access(path, F_OK), 0, "the check left %s", path);
    cr_assert_neq(access(tmp, F_OK), 0, "the check left %s", tmp);
}
