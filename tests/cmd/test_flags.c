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

/* The line flags_value_refusal gives once getopt_long has taken ARGV's first value flag. */
static int refuse_value(char *line, size_t n, int argc, char **argv)
{
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1 && !optarg)
        ;
    cr_assert_neq(c, -1, "no value flag was taken");
    line[0] = '\0';
    return flags_value_refusal(line, n, "tune", LONG, argc, argv, optind);
}

/* Regression: `schedule --cluster --live` read --live as the file (and as the mode), and said
 * only "expected --cluster FILE". */
Test(flags, a_value_that_is_another_option_is_named_as_a_forgotten_value)
{
    char line[256];
    char *argv[] = {"tune", "--json", "--job", "--budget", "3", NULL};
    cr_assert_eq(refuse_value(line, sizeof line, 5, argv), 1);
    cr_assert_str_eq(line, "tunedeck tune: --job: expected a file after it, found the option "
                           "'--budget' (for a value that starts with '-', write --job=VALUE)");
    char *prefix[] = {"tune", "--bud", "--jso", NULL}; /* both by their prefixes */
    cr_assert_eq(refuse_value(line, sizeof line, 3, prefix), 1);
    cr_assert_str_eq(line, "tunedeck tune: --budget: expected an integer after it, found the "
                           "option '--jso' (for a value that starts with '-', write "
                           "--budget=VALUE)");
    char *help[] = {"tune", "--job", "-h", NULL};
    cr_assert_eq(refuse_value(line, sizeof line, 3, help), 1);
    char *valued[] = {"tune", "--job", "--budget=3", NULL};
    cr_assert_eq(refuse_value(line, sizeof line, 3, valued), 1);
}

Test(flags, a_value_that_only_looks_like_an_option_is_taken)
{
    char line[256];
    char *joined[] = {"tune", "--job=--budget", NULL}; /* said in one word: meant */
    cr_assert_eq(refuse_value(line, sizeof line, 2, joined), 0);
    char *other[] = {"tune", "--job", "--not-ours", NULL};
    cr_assert_eq(refuse_value(line, sizeof line, 3, other), 0);
    char *ambiguous[] = {"tune", "--job", "--jo", NULL}; /* names no one option */
    cr_assert_eq(refuse_value(line, sizeof line, 3, ambiguous), 0);
    char *dash[] = {"tune", "--job", "-", NULL};
    cr_assert_eq(refuse_value(line, sizeof line, 3, dash), 0);
    cr_assert_str_eq(line, "");
}
