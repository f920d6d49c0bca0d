/* Shared checks for command-line values, so every command words its errors alike. */
#include "cmd/flags.h"

#include <string.h>

#include "core/base/decimal.h"
#include "core/base/exitcode.h"
#include "core/sim/simcluster.h"

int flags_long(const char *cmd, const char *flag, const char *text, long min, long max,
               long *out)
{
    if (decimal_long(text, min, max, out) < 0) {
        fprintf(stderr, "tunedeck%s%s: %s: expected an integer in [%ld, %ld], found '%s'\n",
                cmd ? " " : "", cmd ? cmd : "", flag, min, max, text);
        return -1;
    }
    return 0;
}

int flags_double(const char *cmd, const char *flag, const char *text, double min, double max,
                 double *out)
{
    if (decimal_double(text, min, max, out) < 0) {
        fprintf(stderr, "tunedeck%s%s: %s: expected a number in [%g, %g], found '%s'\n",
                cmd ? " " : "", cmd ? cmd : "", flag, min, max, text);
        return -1;
    }
    return 0;
}

int flags_name(const char *cmd, const char *flag, const char *text, const char *what)
{
    if (text[0])
        return 0;
    fprintf(stderr, "tunedeck%s%s: %s: expected %s, found ''\n", cmd ? " " : "", cmd ? cmd : "",
            flag, what);
    return -1;
}

void flags_help_wrapped(FILE *out, const char *text, int col, int indent)
{
    enum { WIDTH = 80 };
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t word = strcspn(p, " ");
        if (!word)
            break;
        if (col > indent && col + 1 + (int)word > WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (p != text && col > indent) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, word, out);
        col += (int)word;
        p += word;
    }
    fputc('\n', out);
}

/* What each value flag takes, by its name (every command's flag of one name takes the same
 * kind), for the line that says one came last with nothing after it. A flag without a row is
 * still named, as taking "a value"; cli.sh checks that every command's value flags have one. */
static const struct {
    const char *name, *what;
} VALUES[] = {
    {"arrival-mean", "a number of seconds"},
    {"budget", "an integer"},
    {"checkpoint-file", "a file name"},
    {"cluster", "a file"},
    {"data", "a folder"},
    {"drain", "a node (NODE[@S])"},
    {"duration", "a number of seconds"},
    {"events", "a file"},
    {"gpu-wait", "a number of seconds"},
    {"gpus-per-node", "an integer"},
    {"hold", "NODE=GPUS[@S]"},
    {"interval", "a number of seconds"},
    {"job", "a file"},
    {"job-command", "a command template"},
    {"job-dir", "a folder"},
    {"jobs", "an integer"},
    {"launcher", "a launcher name"},
    {"login", "a host"},
    {"max-interval", "a number of seconds"},
    {"model", "a model name"},
    {"nodes", "an integer"},
    {"optimizer", "an optimizer name"},
    {"pace-ms", "an integer"},
    {"partition", "a partition name"},
    {"pin", "JOB=GPUS"},
    {"plot", "a plot style"},
    {"policy", "a policy name"},
    {"resize-cost", "a number of seconds"},
    {"resume", "a session ID"},
    {"sched-jobs", "an integer"},
    {"sched-speed", "a number"},
    {"seed", "an integer"},
    {"sim", "a simulator setting"},
    {"status-every", "a number of seconds"},
    {"theme", "a theme name or path"},
    {"time-scale", "a number"},
    {"trial-cmd", "a command"},
    {"trial-timeout", "a number of seconds"},
    {"watch-for", "a number of seconds"},
    {"workload", "a file"},
};

/* The option of `longopts` that ARG names as getopt_long reads it ("--NAME", or a prefix of
 * one name alone; with "=VALUE" when `with_value`); NULL for an unknown or ambiguous one. */
static const struct option *named_option(const struct option *longopts, const char *arg,
                                         int with_value)
{
    if (strncmp(arg, "--", 2) != 0 || (!with_value && strchr(arg, '=')))
        return NULL;
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    const struct option *found = NULL;
    int prefixes = 0;
    for (const struct option *o = longopts; len && o->name; o++) {
        if (strncmp(o->name, name, len) != 0)
            continue;
        if (o->name[len] == '\0') { /* an exact name wins over its longer names */
            found = o;
            prefixes = 1;
            break;
        }
        found = o;
        prefixes++;
    }
    return prefixes == 1 ? found : NULL;
}

/* The option with a required value that ARG names alone ("--NAME", not "--NAME=VALUE"). */
static const struct option *value_option(const struct option *longopts, const char *arg)
{
    const struct option *o = named_option(longopts, arg, 0);
    return o && o->has_arg == required_argument ? o : NULL;
}

static const char *value_what(const char *name)
{
    for (size_t i = 0; i < sizeof VALUES / sizeof VALUES[0]; i++)
        if (strcmp(VALUES[i].name, name) == 0)
            return VALUES[i].what;
    return "a value";
}

/* Whether WORD is a group of short options ("-zq") holding the option character C. */
static int short_group_has(const char *word, int c)
{
    return word && word[0] == '-' && word[1] && word[1] != '-' && c > 0 && c < 128 &&
           strchr(word + 1, c);
}

void flags_refusal(char *buf, size_t n, const char *cmd, const struct option *longopts, int argc,
                   char *const *argv, int ind)
{
    /* A short option refused inside its group ("tune -zq") leaves optind on the group, so
     * the word before it is another (it was named); getopt's optopt is the one. A long
     * option refused leaves optopt 0, or, wanting its value, nothing after it. */
    if ((ind < argc && short_group_has(argv[ind], optopt)) ||
        (ind > 0 && ind <= argc && short_group_has(argv[ind - 1], optopt))) {
        snprintf(buf, n, "tunedeck%s%s: unknown or incomplete option '-%c' (try --help)",
                 cmd ? " " : "", cmd ? cmd : "", optopt);
        return;
    }
    const char *arg = ind > 0 && ind <= argc ? argv[ind - 1] : "";
    /* getopt_long refuses a value flag for want of its value only when nothing follows it
     * (else the next word is the value, whatever it is). */
    const struct option *o = ind == argc ? value_option(longopts, arg) : NULL;
    if (!o) {
        snprintf(buf, n, "tunedeck%s%s: unknown or incomplete option '%s' (try --help)",
                 cmd ? " " : "", cmd ? cmd : "", arg);
        return;
    }
    snprintf(buf, n, "tunedeck%s%s: --%s: expected %s after it", cmd ? " " : "", cmd ? cmd : "",
             o->name, value_what(o->name));
}

int flags_value_refusal(char *buf, size_t n, const char *cmd, const struct option *longopts,
                        int argc, char *const *argv, int ind)
{
    /* Only a value given as the next word: "--job=--budget" says it means that file. */
    if (ind < 2 || ind > argc)
        return 0;
    const char *value = argv[ind - 1];
    const struct option *flag = value_option(longopts, argv[ind - 2]);
    if (!flag || (strcmp(value, "-h") != 0 && !named_option(longopts, value, 1)))
        return 0;
    snprintf(buf, n,
             "tunedeck%s%s: --%s: expected %s after it, found the option '%s' (for a value that "
             "starts with '-', write --%s=VALUE)",
             cmd ? " " : "", cmd ? cmd : "", flag->name, value_what(flag->name), value,
             flag->name);
    return 1;
}

/* Prints flags_refusal's line for the option getopt_long just refused (at optind). */
static void flags_unknown(const char *cmd, const struct option *longopts, int argc, char **argv)
{
    char line[512];
    flags_refusal(line, sizeof line, cmd, longopts, argc, argv, optind);
    fprintf(stderr, "%s\n", line);
}

int flags_getopt(const char *cmd, int argc, char **argv, const struct option *longopts,
                 int *longindex)
{
    int c = getopt_long(argc, argv, "h", longopts, longindex);
    char line[512];
    if (c == '?' || c == ':') {
        flags_unknown(cmd, longopts, argc, argv);
        return FLAGS_REFUSED;
    }
    if (c != -1 && optarg && optarg == argv[optind - 1] &&
        flags_value_refusal(line, sizeof line, cmd, longopts, argc, argv, optind)) {
        fprintf(stderr, "%s\n", line);
        return FLAGS_REFUSED;
    }
    return c;
}


void flags_help_sim(FILE *out, const char *what, const char *note)
{
    char text[512];
    snprintf(text, sizeof text, "%s (%s%s)", what, note, simcluster_settings_help());
    fputs("  --sim SPEC         ", out);
    flags_help_wrapped(out, text, 21, 21);
}
