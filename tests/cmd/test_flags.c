#include <criterion/criterion.h>
#include <getopt.h>

#include "cmd/flags.h"

static const struct option LONG[] = {{"budget", required_argument, 0, 'b'},
                                     {"job", required_argument, 0, 'j'},
                                     {"job-dir", required_argument, 0, 'D'},
                                     {"json", no_argument, 0, 'J'},
                                     {"frobnicate", required_argument, 0, 'f'},
                                     {0, 0, 0, 0}};

/* The line for ARGV as getopt_long refuses it, as a command's parser reaches it. */
static void refuse(char *line, size_t n, const char *cmd, int argc, char **argv)
{
    optind = 0; /* glibc starts afresh (1 would go on inside a group an earlier call left) */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1 && c != '?')
        ;
    cr_assert_eq(c, '?', "getopt_long took every word");
    flags_refusal(line, n, cmd, LONG, argc, argv, optind);
}

/* Regression: `tunedeck tune --budget` said "unknown or incomplete option '--budget'". */
Test(flags, a_value_flag_with_nothing_after_it_is_named_with_what_it_takes)
{
    char line[256];
    char *argv[] = {"tune", "--json", "--budget", NULL};
    refuse(line, sizeof line, "tune", 3, argv);
    cr_assert_str_eq(line, "tunedeck tune: --budget: expected an integer after it");
    char *argv2[] = {"tunedeck", "--job", NULL};
    refuse(line, sizeof line, NULL, 2, argv2);
    cr_assert_str_eq(line, "tunedeck: --job: expected a file after it");
}

Test(flags, a_prefix_getopt_takes_is_named_by_the_whole_flag)
{
    char line[256];
    char *argv[] = {"tune", "--bud", NULL};
    refuse(line, sizeof line, "tune", 2, argv);
    cr_assert_str_eq(line, "tunedeck tune: --budget: expected an integer after it");
    char *argv2[] = {"tune", "--job-d", NULL};
    refuse(line, sizeof line, "tune", 2, argv2);
    cr_assert_str_eq(line, "tunedeck tune: --job-dir: expected a folder after it");
}

Test(flags, a_value_flag_without_a_row_still_says_which_flag)
{
    char line[256];
    char *argv[] = {"tune", "--frobnicate", NULL};
    refuse(line, sizeof line, "tune", 2, argv);
    cr_assert_str_eq(line, "tunedeck tune: --frobnicate: expected a value after it");
}

Test(flags, an_unknown_ambiguous_or_valued_switch_stays_unknown_or_incomplete)
{
    char line[256];
    char *unknown[] = {"tune", "--bogus", NULL};
    refuse(line, sizeof line, "tune", 2, unknown);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '--bogus' (try --help)");
    char *ambiguous[] = {"tune", "--jo", NULL}; /* --job, --job-dir or --json */
    refuse(line, sizeof line, "tune", 2, ambiguous);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '--jo' (try --help)");
    char *valued[] = {"tune", "--json=1", NULL};
    refuse(line, sizeof line, "tune", 2, valued);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '--json=1' (try --help)");
    char *later[] = {"tune", "--bogus", "--budget", "3", NULL}; /* not the last word */
    refuse(line, sizeof line, "tune", 4, later);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '--bogus' (try --help)");
}

/* Regression: an unknown short option inside its group was named by the word before it
 * ("tune --budget 3 -zq" said '3'; "tune -zq" said 'tune'). */
Test(flags, an_unknown_short_option_is_named_alone)
{
    char line[256];
    char *argv[] = {"tune", "--budget", "3", "-zq", NULL};
    refuse(line, sizeof line, "tune", 4, argv);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '-z' (try --help)");
    char *first[] = {"tune", "-zq", NULL};
    refuse(line, sizeof line, "tune", 2, first);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '-z' (try --help)");
    char *last[] = {"tune", "-hq", NULL}; /* -h is known: the group's last one is refused */
    optind = 0;
    opterr = 0;
    cr_assert_eq(getopt_long(2, last, "h", LONG, NULL), 'h');
    cr_assert_eq(getopt_long(2, last, "h", LONG, NULL), '?');
    flags_refusal(line, sizeof line, "tune", LONG, 2, last, optind);
    cr_assert_str_eq(line, "tunedeck tune: unknown or incomplete option '-q' (try --help)");
}
