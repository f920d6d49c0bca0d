/* The job folders' check on SSH hosts (remote/live/jobdir.c): the answers it judges, a bad
 * one quoted as the host's, and its script run here by /bin/sh on real folders, links
 * followed (the sshd-harness run is tests/integration/schedlive.sh's). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/live/jobdir.h"

#define OK_HEAD "uid 1000\nd drwxr-xr-x 0 /\nd drwxrwxrwt 0 /tmp\n"

static int judge(const char *answer, Error *err)
{
    memset(err, 0, sizeof *err);
    return jobdir_judge("h1", "/tmp/u/jobs", answer, err);
}

Test(jobdir, trusts_root_and_sticky_folders_above_and_its_own_below)
{
    Error err;
    cr_assert_eq(judge(OK_HEAD "d drwx------ 1000 /tmp/u\nt drwxr-x--- 1000 /tmp/u/jobs\n"
                               "j drwx------. 1000 /tmp/u/jobs/j0\nn /tmp/u/jobs/j1\nend\n",
                       &err),
                 0, "%s", err.msg);
    /* a link of root's on the way, its target checked after it */
    cr_assert_eq(judge(OK_HEAD "l lrwxrwxrwx 0 /tmp/u\nd drwxr-xr-x 0 /data\n"
                               "t drwx------ 1000 /data/jobs\nend\n",
                       &err),
                 0, "%s", err.msg);
}

Test(jobdir, refuses_a_world_writable_folder_on_the_way_naming_host_mode_and_fix)
{
    Error err;
    cr_assert_eq(judge(OK_HEAD "d drwxrwxrwx 1000 /tmp/u\nn /tmp/u/jobs\nend\n", &err), -1);
    cr_assert_eq(err.kind, ERROR_INPUT);
    cr_assert(strstr(err.msg, "h1: the folder /tmp/u on the way to --job-dir /tmp/u/jobs is "
                              "world-writable (mode 0777)") &&
                  strstr(err.msg, "chmod go-w /tmp/u "),
              "%s", err.msg);
    cr_assert_eq(judge(OK_HEAD "t drwxrwxr-x 1000 /tmp/u\nend\n", &err), -1);
    cr_assert(strstr(err.msg, "group-writable (mode 0775)"), "%s", err.msg);
}

Test(jobdir, a_jobs_own_folder_is_ours_and_closed_even_sticky)
{
    Error err;
    cr_assert_eq(judge(OK_HEAD "j drwx------ 0 /tmp/j0\nend\n", &err), -1);
    cr_assert_eq(err.kind, ERROR_INPUT);
    cr_assert(strstr(err.msg, "the job folder /tmp/j0 belongs to uid 0, not to you (uid 1000):"),
              "%s", err.msg);
    cr_assert_eq(judge(OK_HEAD "j drwxrwxrwt 1000 /tmp/j0\nend\n", &err), -1);
    cr_assert(strstr(err.msg, "world-writable (mode 1777); expected no group/other write:"),
              "%s", err.msg);
}

Test(jobdir, refuses_what_another_user_owns_on_the_way_a_link_too)
{
    Error err;
    cr_assert_eq(judge(OK_HEAD "l lrwxrwxrwx 1001 /tmp/u\nend\n", &err), -1);
    cr_assert(strstr(err.msg, "the link /tmp/u on the way to --job-dir /tmp/u/jobs belongs to "
                              "uid 1001, not to you (uid 1000) or root: refused, its owner "
                              "could point it elsewhere"),
              "%s", err.msg);
    cr_assert_eq(judge(OK_HEAD "d drwx------ 1001 /tmp/u\nend\n", &err), -1);
    cr_assert_eq(err.kind, ERROR_INPUT);
    cr_assert_eq(judge(OK_HEAD "d -rw-r--r-- 1000 /tmp/u\nend\n", &err), -1);
    cr_assert(strstr(err.msg, "/tmp/u on the way to --job-dir /tmp/u/jobs is not a folder"),
              "%s", err.msg);
    cr_assert_eq(judge(OK_HEAD "e more than 40 links on the way, at /tmp/u\nend\n", &err), -1);
    cr_assert(strstr(err.msg, "h1: cannot check --job-dir /tmp/u/jobs: more than 40 links"),
              "%s", err.msg);
}

Test(jobdir, a_bad_answer_is_the_hosts_quoted)
{
    static const char *const bad[] = {
        "",                                          /* nothing */
        "Welcome to h1\n" OK_HEAD "end\n",           /* a login banner first */
        OK_HEAD,                                     /* cut short */
        OK_HEAD "end\nd drwx------ 1000 /x\n",       /* after the end */
        OK_HEAD "d drwx------ 1000 x\nend\n",        /* not a path */
        OK_HEAD "d drwx------ me /x\nend\n",         /* not a uid */
        OK_HEAD "d drwx------ -5 /x\nend\n",         /* not a uid either */
        OK_HEAD "d  drwx------ 1000 /x\nend\n",      /* not the script's spacing */
        OK_HEAD "d drwxqwx--- 1000 /x\nend\n",       /* not a mode */
        OK_HEAD "j -rwx------ 1000 /x\nend\n",       /* a job folder the walk called a file */
        OK_HEAD "q drwx------ 1000 /x\nend\n",       /* no such line */
        "uid -1\nend\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        Error err;
        cr_assert_eq(judge(bad[i], &err), -1, "answer %zu passed", i);
        cr_assert_eq(err.kind, ERROR_REMOTE, "answer %zu: %s", i, err.msg);
        cr_assert(!strncmp(err.msg, "h1: the job folder check answered '", 35), "%s", err.msg);
    }
    Error err;
    judge("Welcome to h1\n", &err);
    cr_assert(strstr(err.msg, "answered 'Welcome to h1'"), "%s", err.msg);
}

Test(jobdir, every_argument_is_quoted)
{
    Error err;
    const char *names[] = {"j0", "a'b"};
    char *cmd = jobdir_command("/x/$(touch y)'", names, 2, &err);
    cr_assert_not_null(cmd);
    cr_assert(!strncmp(cmd, "sh -c '", 7), "%s", cmd);
    cr_assert(strstr(cmd, "' tunedeck-jobdir '/x/$(touch y)'\\''' 'j0' 'a'\\''b'"), "%s", cmd);
    free(cmd);
}

/* ---- the script itself, run here ---- */

static char top[] = "/tmp/tunedeck-jobdir.XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(top));
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    cr_assert_eq(system(cmd), 0);
}

/* The script's answer for DIR and the jobs j0, j1 (a relative DIR from top), judged. */
static int walk_here(const char *dir, Error *err)
{
    const char *names[] = {"j0", "j1"};
    char *cmd = jobdir_command(dir, names, 2, err);
    cr_assert_not_null(cmd);
    char full[16384];
    snprintf(full, sizeof full, "cd '%s' && %s", top, cmd);
    free(cmd);
    FILE *f = popen(full, "r");
    cr_assert_not_null(f);
    static char answer[65536];
    size_t n = fread(answer, 1, sizeof answer - 1, f);
    answer[n] = 0;
    cr_assert_eq(pclose(f), 0);
    memset(err, 0, sizeof *err);
    return jobdir_judge("here", dir, answer, err);
}

static void make(const char *rel, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    cr_assert_eq(mkdir(p, mode), 0, "%s", p);
    cr_assert_eq(chmod(p, mode), 0);
}

static void link_to(const char *target, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", top, rel);
    cr_assert_eq(symlink(target, p), 0, "%s", p);
}

Test(jobdir, the_script_walks_real_folders_and_follows_links, .init = setup, .fini = teardown)
{
    Error err;
    make("ok", 0700);
    make("ok/jobs", 0755);
    make("ok/jobs/j0", 0700);
    cr_assert_eq(walk_here("ok/jobs", &err), 0, "%s", err.msg);
    make("open", 0777);
    make("open/in", 0700);
    cr_assert_eq(walk_here("open/in", &err), -1);
    cr_assert(strstr(err.msg, "/open on the way to --job-dir open/in is world-writable"), "%s",
              err.msg);
    /* a link whose target climbs through another link: the folder it passes is checked,
     * though the path it ends at leaves it out */
    link_to("open/in", "via");
    link_to("../../ok", "open/in/up");
    cr_assert_eq(walk_here("via/up/jobs", &err), -1);
    cr_assert(strstr(err.msg, "/open on the way to --job-dir via/up/jobs is world-writable"),
              "%s", err.msg);
    link_to("ok", "fine");
    cr_assert_eq(walk_here("fine/jobs", &err), 0, "%s", err.msg);
    /* a job's folder behind a link to an open folder */
    link_to("../../open", "ok/jobs/j1");
    cr_assert_eq(walk_here("ok/jobs", &err), -1);
    cr_assert(strstr(err.msg, "the job folder ") && strstr(err.msg, "/open is world-writable"),
              "%s", err.msg);
    /* a loop of links */
    link_to("loop2", "loop1");
    link_to("loop1", "loop2");
    cr_assert_eq(walk_here("loop1/jobs", &err), -1);
    cr_assert(strstr(err.msg, "more than 40 links on the way"), "%s", err.msg);
}
