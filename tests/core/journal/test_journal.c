#include <cJSON.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/journal/journal.h"

static char *made_dir;

static void remove_dir(void)
{
    if (!made_dir)
        return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", made_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", made_dir);
}

TestSuite(journal, .fini = remove_dir);

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/td-journal-XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d);
    made_dir = strdup(d);
    return made_dir;
}

static cJSON *event(const char *kind, int n)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "event", kind);
    cJSON_AddNumberToObject(j, "n", n);
    return j;
}

static void append(Journal *j, const char *kind, int n)
{
    cJSON *ev = event(kind, n);
    Error err;
    cr_assert_eq(journal_append(j, ev, &err), 0, "%s", err.msg);
    cJSON_Delete(ev);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(journal, files_are_0600_in_a_0700_folder_whatever_the_umask)
{
    char *base = tmpdir();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/state/sessions", base);
    mode_t old = umask(0);
    Error err;
    Journal *j = journal_create(dir, "s1", &err);
    umask(old);
    cr_assert_not_null(j, "%s", err.msg);
    struct stat st;
    cr_assert_eq(stat(dir, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700, "folder mode %o", st.st_mode & 0777);
    cr_assert_eq(stat(journal_file(j), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "file mode %o", st.st_mode & 0777);
    journal_close(j);
}

Test(journal, an_open_folder_is_made_private)
{
    char *base = tmpdir();
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sessions", base);
    cr_assert_eq(mkdir(dir, 0755), 0);
    chmod(dir, 0755);
    Error err;
    cr_assert_eq(journal_dir_ensure(dir, &err), 0, "%s", err.msg);
    struct stat st;
    stat(dir, &st);
    cr_assert_eq(st.st_mode & 0777, 0700);
}

Test(journal, create_refuses_an_existing_file_or_a_bad_id)
{
    char *dir = tmpdir();
    Error err;
    Journal *j = journal_create(dir, "same", &err);
    cr_assert_not_null(j);
    cr_assert_null(journal_create(dir, "same", &err));
    cr_assert(strstr(err.msg, "cannot create"), "%s", err.msg);
    cr_assert_null(journal_create(dir, "../escape", &err));
    cr_assert_eq(journal_id_valid(".."), 0);
    cr_assert_eq(journal_id_valid("a b"), 0);
    cr_assert_eq(journal_id_valid("20261123-125424-f4e8bf"), 1);
    journal_close(j);
}

Test(journal, appended_events_read_back_in_order)
{
    char *dir = tmpdir();
    Error err;
    Journal *j = journal_create(dir, "rt", &err);
    for (int i = 0; i < 5; i++)
        append(j, "tick", i);
    JournalLog log;
    cr_assert_eq(journal_load(journal_file(j), &log, &err), 0, "%s", err.msg);
    cr_assert_eq(log.n, 5);
    cr_assert_eq(log.n_problems, 0);
    cr_assert_eq(log.torn_tail, 0);
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(log.lines[i], (size_t)i + 1);
        cr_assert_eq(cJSON_GetObjectItem(log.events[i], "n")->valueint, i);
    }
    journal_log_clear(&log);
    journal_close(j);
}

/* A trial's words or a name holding bytes that are not UTF-8 reached the journal raw: the
 * line was no JSON for a strict reader. Written as \uFFFD (one per maximal subpart), beside a
 * C1 control escaped, and read back by tunedeck's reader as those code points. */
Test(journal, bytes_that_are_not_utf8_are_written_as_replacement_characters)
{
    char *dir = tmpdir();
    Error err;
    Journal *j = journal_create(dir, "u8", &err);
    cJSON *ev = event("note", 1);
    cJSON_AddStringToObject(ev, "text", "a\xff" "b\xe2\x82" "c\xed\xa0\x80" "d\xc2\x9b" "e\xc3\xa9");
    cr_assert_eq(journal_append(j, ev, &err), 0, "%s", err.msg);
    cJSON_Delete(ev);
    FILE *f = fopen(journal_file(j), "r");
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert(strstr(line, "\"text\":\"a\\uFFFDb\\uFFFDc\\uFFFD\\uFFFD\\uFFFDd\\u009Be\xc3\xa9\"}\n"),
              "%s", line);
    JournalLog log;
    cr_assert_eq(journal_load(journal_file(j), &log, &err), 0, "%s", err.msg);
    cr_assert_eq(log.n, 1);
    cr_assert_eq(log.n_problems, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(log.events[0], "text")->valuestring,
                     "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                     "d\xc2\x9b" "e\xc3\xa9");
    journal_log_clear(&log);
    journal_close(j);
}

Test(journal, a_torn_last_line_is_dropped_and_the_rest_kept)
{
    const char *text = "{\"event\":\"a\"}\n{\"event\":\"b\"}\n{\"event\":\"c\",\"x\":[1,";
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0);
    cr_assert_eq(log.n, 2);
    cr_assert_eq(log.torn_tail, 1);
    cr_assert_eq(log.valid_bytes, 28);
    cr_assert_eq(log.n_problems, 1);
    cr_assert(strstr(log.problems[0], "j.jsonl:3: torn last line"), "%s", log.problems[0]);
    journal_log_clear(&log);
}

Test(journal, a_corrupted_middle_line_is_reported_by_number_and_the_rest_kept)
{
    const char *text = "{\"event\":\"a\"}\n{\"event\":\"b\" garbage\n[1,2]\n{\"event\":7}\n"
                       "\n{\"event\":\"e\"}\n";
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0);
    cr_assert_eq(log.n, 2);
    cr_assert_eq(log.lines[1], 6);
    cr_assert_eq(log.n_problems, 3);
    cr_assert(strstr(log.problems[0], "j.jsonl:2: corrupted line"), "%s", log.problems[0]);
    cr_assert(strstr(log.problems[1], "j.jsonl:3:") && strstr(log.problems[1], "an array"), "%s",
              log.problems[1]);
    cr_assert(strstr(log.problems[2], "j.jsonl:4:") && strstr(log.problems[2], "'event'"), "%s",
              log.problems[2]);
    cr_assert_eq(log.torn_tail, 0);
    journal_log_clear(&log);
}

Test(journal, a_nul_byte_makes_its_line_corrupt_not_the_file)
{
    const char text[] = "{\"event\":\"a\"}\n{\"ev\0nt\":\"b\"}\n{\"event\":\"c\"}\n";
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, sizeof text - 1, "j", &log, &err), 0);
    cr_assert_eq(log.n, 2);
    cr_assert_eq(log.n_problems, 1);
    cr_assert(strstr(log.problems[0], "NUL"), "%s", log.problems[0]);
    journal_log_clear(&log);
}

Test(journal, reopening_cuts_the_torn_line_so_appends_stay_whole)
{
    char *dir = tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    write_file(path, "{\"event\":\"a\"}\n{\"event\":\"b\",\"n\":");
    JournalLog log;
    Error err;
    cr_assert_eq(journal_load(path, &log, &err), 0);
    Journal *j = journal_reopen(path, log.valid_bytes, &err);
    cr_assert_not_null(j, "%s", err.msg);
    journal_log_clear(&log);
    append(j, "c", 3);
    journal_close(j);
    cr_assert_eq(journal_load(path, &log, &err), 0);
    cr_assert_eq(log.n, 2);
    cr_assert_eq(log.n_problems, 0, "%s", log.n_problems ? log.problems[0] : "");
    cr_assert_str_eq(cJSON_GetObjectItem(log.events[1], "event")->valuestring, "c");
    journal_log_clear(&log);
}

Test(journal, a_second_writer_is_refused_and_in_use_is_seen)
{
    char *dir = tmpdir();
    Error err;
    Journal *j = journal_create(dir, "busy", &err);
    append(j, "a", 1);
    cr_assert_eq(journal_in_use(journal_file(j)), 1);
    cr_assert_null(journal_reopen(journal_file(j), 14, &err));
    char want[700];
    snprintf(want, sizeof want, "journal %s is locked by pid %ld", journal_file(j),
             (long)getpid());
    cr_assert_str_eq(err.msg, want, "the holder is named (/proc/locks)");
    int busy = 0;
    cr_assert_null(journal_take(journal_file(j), &busy, &err));
    cr_assert_eq(busy, 1);
    cr_assert_eq(journal_lock_holder(journal_file(j)), (long)getpid());
    char path[600];
    snprintf(path, sizeof path, "%s", journal_file(j));
    journal_close(j);
    cr_assert_eq(journal_in_use(path), 0);
}

/* A full disk, made with a file size limit (SIGXFSZ ignored, so write() fails with EFBIG). */
Test(journal, a_full_disk_fails_cleanly_and_leaves_only_whole_lines)
{
    char *dir = tmpdir();
    Error err;
    Journal *j = journal_create(dir, "full", &err);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {1000, 1000};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    cJSON *ev = event("padding", 0);
    cJSON_AddStringToObject(
        ev, "pad", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    int ok = 0;
    while (journal_append(j, ev, &err) == 0)
        ok++;
    cJSON_Delete(ev);
    cr_assert_gt(ok, 5);
    cr_assert_lt(ok, 20);
    cr_assert(strstr(err.msg, "write failed"), "%s", err.msg);
    cr_assert_eq(journal_failed(j), 1);
    ev = event("tiny", 1);
    cr_assert_eq(journal_append(j, ev, &err), -1, "a failed journal must refuse more lines");
    cJSON_Delete(ev);
    JournalLog log;
    cr_assert_eq(journal_load(journal_file(j), &log, &err), 0);
    cr_assert_eq(log.n, (size_t)ok);
    cr_assert_eq(log.n_problems, 0, "%s", log.n_problems ? log.problems[0] : "");
    journal_log_clear(&log);
    journal_close(j);
}

Test(journal, the_folder_honours_the_override_then_xdg_then_home)
{
    char out[512];
    Error err;
    cr_assert_eq(journal_dir("/x/state", "/x/xdg", "/x/home", out, sizeof out, &err), 0);
    cr_assert_str_eq(out, "/x/state/sessions");
    journal_dir("", "/x/xdg", "/x/home", out, sizeof out, &err);
    cr_assert_str_eq(out, "/x/xdg/tunedeck/sessions");
    journal_dir(NULL, "relative/xdg", "/x/home", out, sizeof out, &err);
    cr_assert_str_eq(out, "/x/home/.local/state/tunedeck/sessions",
                     "a relative XDG_STATE_HOME is ignored, as the spec says");
    cr_assert_eq(journal_dir(NULL, NULL, NULL, out, sizeof out, &err), -1);
    cr_assert(strstr(err.msg, "no state folder"), "%s", err.msg);
    cr_assert_eq(journal_path("/x/s", "../../etc/passwd", out, sizeof out, &err), 0,
                 "a path with '/' is the operator's own path");
    cr_assert_eq(journal_path("/x/s", "bad id", out, sizeof out, &err), -1);
    cr_assert_eq(journal_path("/x/s", "20261125-a", out, sizeof out, &err), 0);
    cr_assert_str_eq(out, "/x/s/20261125-a.jsonl");
    cr_assert_eq(journal_path(NULL, "20261125-a", out, sizeof out, &err), -1,
                 "an id with no state folder");
}

Test(journal, resume_trusts_only_private_files_in_private_folders)
{
    char dir[] = "/tmp/td-jown.XXXXXX", path[64], cmd[96];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.jsonl", dir);
    FILE *f = fopen(path, "w");
    fclose(f);
    chmod(path, 0600);
    Error err = {0};
    cr_assert_eq(journal_check_owned(path, &err), 0, "%s", err.msg);
    chmod(path, 0620);
    cr_assert_eq(journal_check_owned(path, &err), -1);
    cr_assert(strstr(err.msg, "writable by its group (mode 620)"), "%s", err.msg);
    chmod(path, 0644); /* readable is fine: only who can change what it runs matters */
    cr_assert_eq(journal_check_owned(path, &err), 0, "%s", err.msg);
    chmod(dir, 0777);
    cr_assert_eq(journal_check_owned(path, &err), -1);
    cr_assert(strstr(err.msg, "state folder"), "%s", err.msg);
    chmod(dir, 01777); /* like /tmp: others cannot replace our file */
    cr_assert_eq(journal_check_owned(path, &err), 0, "%s", err.msg);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
