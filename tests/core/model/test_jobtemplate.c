#include <criterion/criterion.h>
#include <string.h>

#include "core/model/jobtemplate.h"

static void accepts(const char *t)
{
    Error e = {0};
    cr_assert_eq(jobtemplate_check(t, &e), 0, "%s: %s", t, e.msg);
}

static void refuses(const char *t, const char *fragment)
{
    Error e = {0};
    cr_assert_eq(jobtemplate_check(t, &e), -1, "accepted: %s", t);
    cr_assert(strstr(e.msg, fragment), "'%s' lacks '%s'", e.msg, fragment);
}

Test(jobtemplate, known_placeholders_outside_quotes_pass)
{
    accepts("");
    accepts("exec python3 train.py --gpus {gpus} --hosts {hosts} --resume {resume}");
    accepts("echo '{ x' and \"{ y\"");  /* a '{' with no '}' after it is text */
    accepts("echo 'it''s' {gpus} \"x\" {hosts} \\' {resume}");
}

Test(jobtemplate, unknown_placeholders_are_refused)
{
    refuses("run {gpu}", "unknown placeholder '{gpu}'");
    refuses("run {}", "unknown placeholder '{}'");
    /* every {...} is substituted, so awk's braces are refused here, not when a job starts */
    refuses("awk '{print $1}' f; run {gpus}", "unknown placeholder '{print $1}'");
    /* ...and the message says where literal braces go; a misspelt name is only misspelt */
    refuses("awk '{print $1}' f", "(every {...} is a placeholder: put literal braces in a "
                                  "script the command runs)");
    Error e = {0};
    cr_assert_eq(jobtemplate_check("run {gpu}", &e), -1);
    cr_assert_null(strstr(e.msg, "literal braces"), "%s", e.msg);
}

Test(jobtemplate, placeholders_inside_quotes_are_refused)
{
    refuses("run '{hosts}'", "'{hosts}' inside single quotes");
    refuses("run \"--gpus={gpus}\"", "'{gpus}' inside double quotes");
    refuses("run \"a\\\"{resume}\"", "inside double quotes");
}

Test(jobtemplate, a_placeholder_after_a_dollar_or_a_backslash_is_refused)
{
    /* ${resume} became $'value' (bash's own quoting, where a backslash in the value escapes
     * the closing quote); \{resume} became \'value', the value unquoted. */
    refuses("run --resume ${resume}", "placeholder '{resume}' after '$'");
    refuses("run --hosts=\\${hosts}", "after '$'");
    refuses("run --resume \\{resume}", "placeholder after a backslash ('\\{resume}')");
    accepts("run --resume {resume} --x $HOME \\$ \\{ x");
}
