/* The live Slurm backend's job folder is trusted only when it is ours: another user's, or
 * one writable by group or others (or in such a folder), is refused before any sbatch, and
 * the batch script replaces whatever tunedeck-job.sbatch was there (a symlink is not
 * followed). Every job's folder is checked before the run too (check_folders), so such a
 * folder refuses the run rather than fail each job as it starts. Stand-in Slurm commands on
 * PATH, as in test_liverun_slurm_submit.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/readall.h"
#include "remote/live/liverun_slurm.h"
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

static char dir[] = "/tmp/tunedeck-ljobdir.XXXXXX";

/* sbatch records its arguments (sbatch-calls) and answers job 100; scancel and squeue say
 * nothing. */
static const char *const STAND_INS[][2] = {
    {"sbatch", "echo \"$*\" >> \"$D/sbatch-calls\"\necho 100\n"},
    {"squeue", ":\n"},
    {"scancel", ":\n"},
};

static void setup(void)
{
    standins_install(dir, STAND_INS, sizeof STAND_INS / sizeof *STAND_INS);
}

static void teardown(void)
{
    standins_remove(dir);
}

TestSuite(liverun_slurm_jobdir, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static char *path_in(const char *name)
{
    char *p = NULL;
    cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

static char *text_of(const char *name)
{
    char *path = path_in(name);
    Error err;
    char *text = readall_file(path, 1 << 20, NULL, &err);
    free(path);
    return text ? text : strdup("");
}

static void make_folder(const char *name, mode_t mode)
{
    char *path = path_in(name);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_eq(chmod(path, mode), 0); /* whatever the umask */
    free(path);
}

static Backend backend(void)
{
    return backend_new(10, NULL);
}

/* Starts job "j" in DIR/work/j. */
static void *start(Backend *b, Error *err)
{
    return backend_start(b, dir, "j", "train-the-model", err);
}

static void refused(const char *folder, const char *why, const char *fix)
{
    Backend b = backend();
    Error err;
    void *run = start(&b, &err);
    cr_assert_null(run, "started in a folder others can write");
    char *path = path_in(folder);
    cr_assert(strstr(err.msg, path), "names the folder: %s", err.msg);
    cr_assert(strstr(err.msg, why), "and its owner or mode: %s", err.msg);
    cr_assert(strstr(err.msg, fix), "and the fix: %s", err.msg);
    /* the same at every start until someone fixes the folder: the driver fails the job at
     * once rather than try again */
    cr_assert_eq(backend_refusal, LIVERUN_REFUSED_FOR_GOOD, "%s", err.msg);
    backend_free(&b);
    char *calls = text_of("sbatch-calls");
    cr_assert_str_eq(calls, "", "no sbatch ran");
    free(path), free(calls);
}

Test(liverun_slurm_jobdir, a_group_writable_job_folder_is_refused_before_any_sbatch)
{
    make_folder("work", 0755);
    make_folder("work/j", 0775);
    refused("work/j", "is group-writable (mode 0775); expected no group/other write", "chmod go-w");
}

/* Regression: a folder anyone can write was said to be "writable by its group". */
Test(liverun_slurm_jobdir, a_world_writable_job_folder_is_said_to_be_so)
{
    make_folder("work", 0755);
    make_folder("work/j", 0777);
    char *path = path_in("work/j"), fix[512];
    snprintf(fix, sizeof fix, "chmod go-w %s", path);
    refused("work/j", "is world-writable (mode 0777); expected no group/other write", fix);
    free(path);
}

Test(liverun_slurm_jobdir, a_job_folder_in_a_folder_others_can_write_is_refused)
{
    make_folder("work", 0777); /* not sticky: anyone can swap the job's folder */
    refused("work",
            "is world-writable (mode 0777); expected no group/other write (or the "
            "sticky bit",
            "chmod go-w");
}

Test(liverun_slurm_jobdir, another_users_job_folder_is_refused)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to give the folder away");
    make_folder("work", 0755);
    make_folder("work/j", 0755);
    char *path = path_in("work/j");
    cr_assert_eq(chown(path, 4242, 4242), 0);
    free(path);
    refused("work/j", "belongs to uid 4242", "a folder of your own");
}

Test(liverun_slurm_jobdir, a_job_folder_in_a_sticky_folder_is_used)
{
    make_folder("work", 01777);
    Backend b = backend();
    Error err;
    void *run = start(&b, &err);
    cr_assert_not_null(run, "%s", err.msg);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_jobdir, a_symlinked_script_is_replaced_not_followed)
{
    make_folder("work", 0755);
    make_folder("work/j", 0755);
    char *target = path_in("elsewhere"), *link_path = path_in("work/j/tunedeck-job.sbatch");
    FILE *f = fopen(target, "w");
    cr_assert_not_null(f);
    fputs("theirs\n", f);
    fclose(f);
    cr_assert_eq(symlink(target, link_path), 0);
    Backend b = backend();
    Error err;
    void *run = start(&b, &err);
    cr_assert_not_null(run, "%s", err.msg);
    char *theirs = text_of("elsewhere"), *ours = text_of("work/j/tunedeck-job.sbatch");
    cr_assert_str_eq(theirs, "theirs\n", "the link's target is untouched");
    cr_assert(strstr(ours, "train-the-model"), "our script is there: %s", ours);
    struct stat st;
    cr_assert_eq(lstat(link_path, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "a regular file now, not the link");
    cr_assert_eq(st.st_uid, geteuid());
    cr_assert_eq(st.st_mode & 022, 0, "no one else can write it");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
    char *listing = NULL, cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A '%s/work/j' > '%s/listing'", dir, dir);
    cr_assert_eq(system(cmd), 0);
    listing = text_of("listing");
    cr_assert_str_eq(listing, "tunedeck-job.sbatch\n", "no temporary file is left");
    free(target), free(link_path), free(theirs), free(ours), free(listing);
}

/* Before the run: the folders of jobs a, b and c under DIR/work, of which only those that
 * exist are judged. */
static int check_before_run(Error *err)
{
    static const char *const names[] = {"a", "b", "c"};
    char *work = path_in("work");
    cr_assert_not_null(LIVERUN_SLURM.check_folders, "the Slurm backend checks folders up front");
    int rc = LIVERUN_SLURM.check_folders(NULL, work, names, 3, err);
    free(work);
    return rc;
}

Test(liverun_slurm_jobdir, folders_not_made_yet_pass_the_check_before_the_run)
{
    Error err;
    cr_assert_eq(check_before_run(&err), 0, "nothing there: the starts make them (%s)", err.msg);
    make_folder("work", 0755);
    make_folder("work/b", 0700);
    cr_assert_eq(check_before_run(&err), 0, "%s", err.msg);
}

/* Regression: a writable folder was found only as each job started, so every job failed
 * and the run went on to --duration. */
Test(liverun_slurm_jobdir, a_writable_folder_refuses_the_run_naming_its_job)
{
    make_folder("work", 0755);
    make_folder("work/a", 0700);
    make_folder("work/b", 0777);
    Error err;
    cr_assert_eq(check_before_run(&err), -1, "a world-writable folder passed");
    cr_assert_eq(err.kind, ERROR_INPUT, "bad input: exit 3");
    char *path = path_in("work/b"), want[1024];
    snprintf(want, sizeof want,
             "job b: its folder %s is world-writable (mode 0777); expected no group/other "
             "write: chmod go-w %s",
             path, path);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    free(path);
    char *calls = text_of("sbatch-calls");
    cr_assert_str_eq(calls, "", "no sbatch ran");
    free(calls);
}

Test(liverun_slurm_jobdir, a_writable_job_dir_refuses_the_run)
{
    make_folder("work", 0775);
    Error err;
    cr_assert_eq(check_before_run(&err), -1, "a group-writable --job-dir passed");
    char *path = path_in("work");
    cr_assert(strstr(err.msg, path) && strstr(err.msg, "is group-writable (mode 0775)") &&
                  strstr(err.msg, "chmod go-w"),
              "%s", err.msg);
    free(path);
}
