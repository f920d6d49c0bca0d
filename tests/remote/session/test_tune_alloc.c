#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/session/tune_alloc.h"

static size_t left_of(const char *text, TuneAllocLeft *out, size_t cap)
{
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0, "%s", err.msg);
    size_t n = tune_alloc_left(&log, out, cap);
    journal_log_clear(&log);
    return n;
}

Test(tune_alloc, an_allocation_never_released_is_left)
{
    TuneAllocLeft l[TUNE_ALLOC_LEFT_MAX];
    cr_assert_eq(left_of("{\"event\":\"session\"}\n"
                         "{\"event\":\"slurm_allocation\",\"job\":\"57\","
                         "\"name\":\"tunedeck-tune-1234\",\"where\":\"login1\",\"wall_s\":1}\n"
                         "{\"event\":\"ended\"}\n",
                         l, TUNE_ALLOC_LEFT_MAX),
                 1);
    cr_assert_str_eq(l[0].job, "57");
    cr_assert_str_eq(l[0].name, "tunedeck-tune-1234");
    cr_assert_str_eq(l[0].where, "login1");
}

Test(tune_alloc, a_released_one_is_not_and_a_resume_adds_its_own)
{
    TuneAllocLeft l[TUNE_ALLOC_LEFT_MAX];
    cr_assert_eq(
        left_of(
            "{\"event\":\"session\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":\"57\",\"name\":\"tunedeck-tune-1\"}\n"
            "{\"event\":\"resumed\"}\n"
            "{\"event\":\"slurm_allocation_released\",\"job\":\"57\",\"result\":\"released\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":\"60\",\"name\":\"tunedeck-tune-2\"}\n"
            "{\"event\":\"slurm_allocation_released\",\"job\":\"60\",\"result\":\"released\"}\n",
            l, TUNE_ALLOC_LEFT_MAX),
        0);
    cr_assert_eq(
        left_of("{\"event\":\"session\"}\n"
                "{\"event\":\"slurm_allocation\",\"job\":\"57\",\"name\":\"tunedeck-tune-1\"}\n"
                "{\"event\":\"slurm_allocation_released\",\"job\":\"57\",\"result\":\"gone\"}\n"
                "{\"event\":\"slurm_allocation\",\"job\":\"60\",\"name\":\"tunedeck-tune-2\"}\n",
                l, TUNE_ALLOC_LEFT_MAX),
        1);
    cr_assert_str_eq(l[0].job, "60");
}

/* Nothing is cancelled on a damaged or edited line's word: only ids and names tunedeck gives. */
Test(tune_alloc, a_line_that_is_not_ours_is_none)
{
    TuneAllocLeft l[TUNE_ALLOC_LEFT_MAX];
    cr_assert_eq(
        left_of(
            "{\"event\":\"session\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":\"57\",\"name\":\"training\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":\"-u root\",\"name\":\"tunedeck-tune-1\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":\"58\",\"name\":\"tunedeck-tune-1x\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":58,\"name\":\"tunedeck-tune-1\"}\n"
            "{\"event\":\"slurm_allocation\",\"job\":\"59\"}\n",
            l, TUNE_ALLOC_LEFT_MAX),
        0);
}

Test(tune_alloc, at_most_cap_the_latest_kept)
{
    char text[4096] = "{\"event\":\"session\"}\n";
    for (int i = 0; i < 5; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "{\"event\":\"slurm_allocation\",\"job\":\"%d\",\"name\":\"tunedeck-tune-1\"}\n",
                 70 + i);
    TuneAllocLeft l[3];
    cr_assert_eq(left_of(text, l, 3), 3);
    cr_assert_str_eq(l[0].job, "72");
    cr_assert_str_eq(l[2].job, "74");
    cr_assert(tune_alloc_event("slurm_allocation"));
    cr_assert(tune_alloc_event("slurm_allocation_released"));
    cr_assert(!tune_alloc_event("ended"));
}
