/* srun --label's lines read back per task: the label as Slurm 22.05 writes it ("%*d: ",
 * the width of the step's largest task number), srun's own lines with none, and the 1024-byte
 * pieces slurmstepd cuts a longer line into, joined per task and stream. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/launch/srunlabel.h"

Test(srunlabel, a_label_gives_the_task_and_its_text)
{
    const char *text;
    cr_assert_eq(srunlabel_parse("0: no dataset at /data/x", &text), 0);
    cr_assert_str_eq(text, "no dataset at /data/x");
    cr_assert_eq(srunlabel_parse(" 3: {\"event\": \"done\"}", &text), 3); /* width 2 */
    cr_assert_str_eq(text, "{\"event\": \"done\"}");
    cr_assert_eq(srunlabel_parse("11: x", &text), 11);
    cr_assert_str_eq(text, "x");
    cr_assert_eq(srunlabel_parse("  7: ", &text), 7); /* width 3, an empty line */
    cr_assert_str_eq(text, "");
    cr_assert_eq(srunlabel_parse("1:", &text), 1); /* its space trimmed on the way */
    cr_assert_str_eq(text, "");
    /* the task's own text is kept whole, a label-like start of it included */
    cr_assert_eq(srunlabel_parse("0: 12: not a label", &text), 0);
    cr_assert_str_eq(text, "12: not a label");
}

Test(srunlabel, sruns_own_lines_and_others_carry_no_label)
{
    const char *lines[] = {"srun: error: n2: task 1: Exited with exit code 3",
                           "slurmstepd-n1: error: *** STEP 1.0 ON n1 CANCELLED AT x ***",
                           "12:30 is not a label", "1:x", "", " ", ": x", "-1: x",
                           "12345678: more tasks than any step", "1 : x", "P0 0: x"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *text = NULL;
        cr_assert_eq(srunlabel_parse(lines[i], &text), -1, "%s", lines[i]);
        cr_assert_eq(text, lines[i]);
    }
}

static SrunLines *l;

static void setup(void)
{
    l = srunlines_new(1 << 20);
    cr_assert_not_null(l);
}

static void teardown(void)
{
    srunlines_free(l);
}

TestSuite(srunlines, .init = setup, .fini = teardown);

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static char *labeled(const char *label, const char *text)
{
    char *s = malloc(strlen(label) + strlen(text) + 1);
    cr_assert_not_null(s);
    strcpy(s, label);
    strcat(s, text);
    return s;
}

Test(srunlines, whole_lines_come_out_as_they_go_in)
{
    long task;
    const char *text;
    cr_assert_eq(srunlines_push(l, 1, " 9: hello", &task, &text), 1);
    cr_assert_eq(task, 9);
    cr_assert_str_eq(text, "hello");
    cr_assert_eq(srunlines_push(l, 2, "srun: error: n1: task 0: Killed", &task, &text), 1);
    cr_assert_eq(task, -1);
    cr_assert_str_eq(text, "srun: error: n1: task 0: Killed");
}

/* As the harness's srun printed a 2,500-byte line of each of two tasks: three pieces each,
 * interleaved; then a line of exactly 1,024 bytes (a piece, then an empty rest). */
Test(srunlines, the_pieces_of_two_tasks_lines_are_joined_per_task)
{
    char *a = repeat('a', 2500), *b = repeat('b', 2500), *c = repeat('c', 1024);
    char *tmp, piece[1100];
    long task;
    const char *text;
    /* task 1's first piece, task 0's first, task 1's second and rest, task 0's */
    snprintf(piece, sizeof piece, "1: %.1024s", b);
    cr_assert_eq(srunlines_push(l, 1, piece, &task, &text), 0);
    snprintf(piece, sizeof piece, "0: %.1024s", a);
    cr_assert_eq(srunlines_push(l, 1, piece, &task, &text), 0);
    snprintf(piece, sizeof piece, "1: %.1024s", b + 1024);
    cr_assert_eq(srunlines_push(l, 1, piece, &task, &text), 0);
    /* a line of task 1 on the other stream is its own */
    cr_assert_eq(srunlines_push(l, 2, "1: a warning", &task, &text), 1);
    cr_assert_str_eq(text, "a warning");
    tmp = labeled("1: ", b + 2048);
    cr_assert_eq(srunlines_push(l, 1, tmp, &task, &text), 1);
    free(tmp);
    cr_assert_eq(task, 1);
    cr_assert_str_eq(text, b);
    snprintf(piece, sizeof piece, "0: %.1024s", a + 1024);
    cr_assert_eq(srunlines_push(l, 1, piece, &task, &text), 0);
    tmp = labeled("0: ", a + 2048);
    cr_assert_eq(srunlines_push(l, 1, tmp, &task, &text), 1);
    free(tmp);
    cr_assert_eq(task, 0);
    cr_assert_str_eq(text, a);
    tmp = labeled("0: ", c);
    cr_assert_eq(srunlines_push(l, 1, tmp, &task, &text), 0);
    free(tmp);
    cr_assert_eq(srunlines_push(l, 1, "0: ", &task, &text), 1);
    cr_assert_str_eq(text, c);
    /* nothing is left under way: the next line is whole */
    cr_assert_eq(srunlines_push(l, 1, "0: next", &task, &text), 1);
    cr_assert_str_eq(text, "next");
    free(a);
    free(b);
    free(c);
}

Test(srunlines, a_joined_line_is_given_out_at_its_bound)
{
    srunlines_free(l);
    l = srunlines_new(2048);
    cr_assert_not_null(l);
    char *p = repeat('x', 1024), *line = labeled("0: ", p);
    long task;
    const char *text;
    cr_assert_eq(srunlines_push(l, 1, line, &task, &text), 0);
    cr_assert_eq(srunlines_push(l, 1, line, &task, &text), 1);
    cr_assert_eq(strlen(text), 2048);
    free(p);
    free(line);
}
