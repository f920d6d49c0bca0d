/* What a Slurm step's lines say of why it failed, read line by line as launch_slurm.c reads
 * them (srunlabel.h takes the label off first): in one heterogeneous step, srun labels the
 * tasks through the whole step but names a failed one by its node and its number within its
 * component, and each task's node mark joins the two. The lines are those of the test
 * harness's Slurm 22.05 (tests/slurm-harness.sh) for a step of n1 (2 GPUs) : n3,n4 (4 GPUs). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "remote/launch/srunlabel.h"
#include "remote/launch/srunwords.h"

/* Every line as srun wrote it on its standard error, then the step's end with `reason` (the
 * inner launcher's: srun's last line); the reason srunwords makes of them. */
static void explain(const char *const *lines, size_t n, const char *reason, char *out, size_t cap)
{
    SrunWords *w = srunwords_new();
    for (size_t i = 0; i < n; i++) {
        const char *text;
        long task = srunlabel_parse(lines[i], &text);
        if (!srunwords_node(w, task, text))
            srunwords_stderr(w, task, text);
    }
    Observation o = {.status = TRIAL_FAILED};
    snprintf(o.reason, sizeof o.reason, "%s", reason);
    srunwords_explain(w, &o);
    snprintf(out, cap, "%s", o.reason);
    srunwords_free(w);
}

#define N(a) (sizeof(a) / sizeof *(a))

/* As the harness printed them: n4, task 1 of the second component and 2 of the step, fails;
 * srun stops the others, which speak after it, the first component's task 0 among them. */
Test(srunwords, a_heterogeneous_steps_failed_task_is_found_by_its_node)
{
    const char *lines[] = {
        "0: tunedeck-node n1", "2: tunedeck-node n4", "1: tunedeck-node n3",
        "srun: error: n4: task 1: Exited with exit code 3",
        "srun: launch/slurm: _step_signal: Terminating StepId=2.1", "2: no dataset at /data/x",
        "srun: launch/slurm: _step_signal: Terminating StepId=1.1",
        "0: slurmstepd-n1: error: *** STEP 1.1 ON n1 CANCELLED AT 2026-11-27T08:59:58 ***",
        "1: slurmstepd-n3: error: *** STEP 2.1 ON n3 CANCELLED AT 2026-11-27T08:59:58 ***",
        "srun: error: n1: task 0: Exited with exit code 143",
        "srun: error: n3: task 0: Exited with exit code 143", "0: saving a checkpoint",
        "1: saving a checkpoint too"};
    char r[256];
    explain(lines, N(lines), "exit status 143: srun: error: n3: task 0: Exited with exit code 143",
            r, sizeof r);
    cr_assert_not_null(strstr(r, "; task 2 (n4, exit code 3) said: no dataset at /data/x"), "%s",
                       r);
    cr_assert_null(strstr(r, "checkpoint"), "%s", r);
}

/* srun's last line is its word of the failure itself ("n3: task 0"), which is the step's task
 * 1; the step's task 0 (n1, the other component's task 0) spoke after it. Before the marks,
 * "task 0" was read as the label 0: n1's words. */
Test(srunwords, sruns_number_within_a_component_is_not_the_label)
{
    const char *lines[] = {"0: tunedeck-node n1", "1: tunedeck-node n3",
                           "1: no dataset at /data/x",
                           "srun: error: n3: task 0: Exited with exit code 3",
                           "0: warming up the GPUs"};
    char r[256];
    explain(lines, N(lines), "exit status 3: srun: error: n3: task 0: Exited with exit code 3", r,
            sizeof r);
    cr_assert_not_null(strstr(r, "; task 1 (n3) said: no dataset at /data/x"), "%s", r);
    cr_assert_null(strstr(r, "warming"), "%s", r);
}

/* A node no mark named: no task's words are guessed for it. */
Test(srunwords, a_failed_node_without_a_mark_gets_no_words)
{
    const char *lines[] = {"0: tunedeck-node n1", "0: warming up the GPUs",
                           "srun: error: n9: task 0: Exited with exit code 3"};
    char r[256];
    explain(lines, N(lines), "exit status 3: srun: error: n9: task 0: Exited with exit code 3", r,
            sizeof r);
    cr_assert_null(strstr(r, "said:"), "%s", r);
}

/* One step of one component has no marks to go by (a stand-in srun that prints none): srun's
 * number is the label, as before. */
Test(srunwords, without_marks_sruns_number_is_the_label)
{
    const char *lines[] = {"1: no dataset at /data/x",
                           "srun: error: n2: task 1: Exited with exit code 3",
                           "0: epoch 2: loss 0.91"};
    char r[256];
    explain(lines, N(lines), "exit status 3: srun: error: n2: task 1: Exited with exit code 3", r,
            sizeof r);
    cr_assert_not_null(strstr(r, "; task 1 said: no dataset at /data/x"), "%s", r);
}

/* The mark: a node name alone after it; a task's first is kept (a trial that prints one later
 * does not move its task), and an unlabeled one names no task. */
Test(srunwords, the_node_mark_is_read_once_per_task)
{
    SrunWords *w = srunwords_new();
    cr_assert_eq(srunwords_node(w, 2, "tunedeck-node n4"), 2);
    cr_assert_str_eq(srunwords_node_of(w, 2), "n4");
    cr_assert_eq(srunwords_node(w, 2, "tunedeck-node n1"), 1);
    cr_assert_str_eq(srunwords_node_of(w, 2), "n4");
    cr_assert_eq(srunwords_node(w, -1, "tunedeck-node n1"), 1);
    cr_assert_null(srunwords_node_of(w, -1));
    const char *not_marks[] = {"tunedeck-node ", "tunedeck-node n1 and more", "tunedeck-node",
                               "loading on n1", " tunedeck-node n1"};
    for (size_t i = 0; i < N(not_marks); i++)
        cr_assert_eq(srunwords_node(w, 3, not_marks[i]), 0, "%s", not_marks[i]);
    cr_assert_null(srunwords_node_of(w, 3));
    srunwords_free(w);
}
