#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/workload.h"
#include "tests/support/fixtures.h"

FIXTURE_CATALOGUE_SUITE(workload);

#define HEADER "name,time,application,num_replicas,batch_size\n"

static void reject(const char *text, const char *fragment)
{
    SchedJobSpec *s = NULL;
    size_t n = 0;
    Error e;
    cr_assert_eq(workload_parse(text, "w.csv", cat, &s, &n, &e), -1, "accepted: %s", text);
    cr_assert(strstr(e.msg, fragment), "message '%s' lacks '%s'", e.msg, fragment);
}

Test(workload, reads_the_fixture)
{
    SchedJobSpec *s;
    size_t n;
    Error e;
    cr_assert_eq(
        workload_load(TUNEDECK_SOURCE_DIR "/tests/fixtures/workload-small.csv", cat, &s, &n, &e), 0,
        "%s", e.msg);
    cr_assert_eq(n, 12);
    cr_assert_str_eq(s[0].name, "cifar10-0");
    cr_assert_float_eq(s[0].submit_s, 107, 0);
    cr_assert_eq(s[0].gpus, 6);
    cr_assert_eq(s[0].batch_size, 2048);
    workload_free(s, n);
}

Test(workload, unknown_application_names_line_and_field)
{
    reject(HEADER "a,0,cifar10,1,128\nb,5,alexnet,1,128\n", "w.csv:3: field 'application'");
}

Test(workload, negative_time_is_rejected)
{
    reject(HEADER "a,-1,cifar10,1,128\n", "w.csv:2: field 'time'");
}

Test(workload, unsorted_rows_are_rejected)
{
    reject(HEADER "a,10,cifar10,1,128\nb,5,cifar10,1,128\n", "expected rows sorted by time");
}

Test(workload, empty_file_and_missing_column_are_rejected)
{
    reject("", "empty file");
    reject(HEADER, "at least one job row");
    reject("name,time,application,num_replicas\na,0,cifar10,1\n", "'batch_size'");
}

Test(workload, bad_counts_are_rejected)
{
    reject(HEADER "a,0,cifar10,0,128\n", "field 'num_replicas'");
    reject(HEADER "a,0,cifar10,1.5,128\n", "whole numbers");
}

Test(workload, a_job_name_given_twice_is_refused)
{
    /* Two jobs of one name would share one folder and one checkpoint in live mode. */
    reject(HEADER "j1,0,bert,1,128\nj2,1,bert,1,128\nj1,2,bert,1,128\n",
           "w.csv:4: field 'name': job 'j1' appears twice (first at line 2)");
}

Test(workload, a_job_name_with_terminal_controls_is_refused)
{
    reject(HEADER "j\x1b[2J,0,bert,1,128\n", "w.csv:2: field 'name': expected printable text");
    reject(HEADER "j\rok,0,bert,1,128\n", "expected printable text");
}

Test(workload, the_first_repeated_name_in_file_order_is_named_with_its_first_line)
{
    /* Names are matched by sorting them: the error must still be the first bad row's. */
    reject(HEADER "z,0,bert,1,128\nb,1,bert,1,128\nb,2,bert,1,128\nz,3,bert,1,128\n",
           "w.csv:4: field 'name': job 'b' appears twice (first at line 3)");
    reject(HEADER "a,0,bert,1,128\nx,1,bert,1,128\na,2,bert,1,128\na,3,bert,1,128\n",
           "w.csv:4: field 'name': job 'a' appears twice (first at line 2)");
}

/* A name of 512 bytes or more, printable as it is, was refused as "expected printable text
 * (no control characters or invalid UTF-8)": the operator looked for a control that was not
 * there. Its length is what is named; 511 bytes are still read. */
Test(workload, a_name_too_long_is_refused_as_too_long)
{
    char text[2048], name[600];
    memset(name, 'a', 520);
    name[520] = 0;
    snprintf(text, sizeof text, HEADER "%s,0,bert,1,128\n", name);
    reject(text, "w.csv:2: field 'name': expected a job name of at most 511 bytes, found 520 bytes");
    name[511] = 0;
    snprintf(text, sizeof text, HEADER "%s,0,bert,1,128\n", name);
    Error err;
    SchedJobSpec *s = NULL;
    size_t n = 0;
    cr_assert_eq(workload_parse(text, "w.csv", cat, &s, &n, &err), 0, "%s", err.msg);
    workload_free(s, n);
}

/* A column the reader does not read (a GPU type, a duration) was dropped without a word:
 * the run was not the one the file describes. */
Test(workload, a_column_it_does_not_read_is_refused_by_name)
{
    reject("name,time,application,num_replicas,batch_size,gpu\na,0,cifar10,1,128,V100\n",
           "w.csv:1: column 6 'gpu': expected only the columns "
           "name,time,application,num_replicas,batch_size");
    /* the columns in another order are still the five */
    SchedJobSpec *s;
    size_t n;
    Error e;
    cr_assert_eq(
        workload_parse("time,name,batch_size,num_replicas,application\n0,a,128,1,cifar10\n",
                       "w.csv", cat, &s, &n, &e),
        0, "%s", e.msg);
    cr_assert_str_eq(s[0].name, "a");
    workload_free(s, n);
}

/* A quoted field kept its quotes (the job '"a"'), and "a,b" was two fields. RFC 4180. */
Test(workload, quoted_fields_are_read_as_rfc_4180)
{
    SchedJobSpec *s;
    size_t n;
    Error e;
    cr_assert_eq(workload_parse("\"name\",time,application,num_replicas,batch_size\n"
                                "\"a\",0,cifar10,1,128\n\"b,c\",1,\"cifar10\",1,128\n"
                                "\"say \"\"hi\"\"\",2,cifar10,1,128\n",
                                "w.csv", cat, &s, &n, &e),
                 0, "%s", e.msg);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(s[0].name, "a");
    cr_assert_str_eq(s[1].name, "b,c");
    cr_assert_str_eq(s[1].model, "cifar10");
    cr_assert_str_eq(s[2].name, "say \"hi\"");
    workload_free(s, n);
    reject(HEADER "a\"b,0,cifar10,1,128\n", "w.csv:2: field 'name': expected a double quote only "
                                            "around a whole field");
    reject(HEADER "a,0,cifar10,1,\"128\n", "w.csv:2: field 'batch_size': expected the closing "
                                           "quote of a quoted field on its line");
    reject(HEADER "\"a\"b,0,cifar10,1,128\n", "w.csv:2: field 'name': expected a comma or the "
                                              "line's end after the closing quote, found 'b'");
}

/* A row with a field more than the header: which column has no name. */
Test(workload, a_row_with_an_extra_field_names_its_line_and_column)
{
    reject(HEADER "a,0,cifar10,1,128,V100\n",
           "w.csv:2: column 6: expected 5 comma-separated fields (the header's), found 6");
}
