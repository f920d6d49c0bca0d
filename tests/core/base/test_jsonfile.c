#include <cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/jsonfile.h"
#include "core/base/readall.h"

Test(jsonfile, writes_the_document_and_a_final_newline)
{
    char dir[] = "/tmp/tunedeck-jsonfile.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/out.json", dir);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "ratio", 1.5);
    Error err;
    cr_assert_eq(jsonfile_write(path, root, &err), 0, "%s", err.msg);
    char *text = readall_file(path, 0, NULL, &err);
    cr_assert(text, "%s", err.msg);
    cr_assert_eq(text[strlen(text) - 1], '\n');
    cJSON *back = cJSON_Parse(text);
    cr_assert(back && cJSON_GetNumberValue(cJSON_GetObjectItem(back, "ratio")) == 1.5);
    cJSON_Delete(back), cJSON_Delete(root), free(text);
    unlink(path), rmdir(dir);
}

Test(jsonfile, a_path_that_cannot_be_written_names_itself_and_why)
{
    cJSON *root = cJSON_CreateObject();
    Error err;
    cr_assert_eq(jsonfile_write("/nonexistent-dir/out.json", root, &err), -1);
    cr_assert(strstr(err.msg, "/nonexistent-dir/out.json: cannot write: "), "%s", err.msg);
    cr_assert(strstr(err.msg, "No such file"), "%s", err.msg);
    cJSON_Delete(root);
}

Test(jsonfile, a_full_disk_is_an_error_not_a_short_file)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full here");
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "k", "v");
    Error err;
    cr_assert_eq(jsonfile_write("/dev/full", root, &err), -1);
    cr_assert(strstr(err.msg, "No space left"), "%s", err.msg);
    cJSON_Delete(root);
}

/* Regression: the benchmarks learnt that --out could not be written only after the run. */
Test(jsonfile, an_unwritable_path_is_found_before_anything_is_written)
{
    Error err;
    cr_assert_eq(jsonfile_check_writable("/nonexistent-dir/out.json", &err), -1);
    cr_assert(strstr(err.msg, "/nonexistent-dir/out.json: cannot write: No such file"), "%s",
              err.msg);
    char dir[] = "/tmp/tunedeck-jsonfile.XXXXXX";
    cr_assert(mkdtemp(dir));
    cr_assert_eq(jsonfile_check_writable(dir, &err), -1, "a folder is no output file");
    cr_assert(strstr(err.msg, "Is a directory"), "%s", err.msg);
    char path[64];
    snprintf(path, sizeof path, "%s/out.json", dir);
    cr_assert_eq(jsonfile_check_writable(path, &err), 0, "%s", err.msg);
    cr_assert_neq(access(path, F_OK), 0, "the check leaves no file behind");
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    cr_assert(fd >= 0 && write(fd, "kept", 4) == 4);
    close(fd);
    cr_assert_eq(jsonfile_check_writable(path, &err), 0, "%s", err.msg);
    char *text = readall_file(path, 0, NULL, &err);
    cr_assert(text && strcmp(text, "kept") == 0, "an existing file is left as it was");
    free(text);
    if (geteuid() != 0) { /* root writes through any mode */
        chmod(path, 0444);
        cr_assert_eq(jsonfile_check_writable(path, &err), -1);
        cr_assert(strstr(err.msg, "Permission denied"), "%s", err.msg);
    }
    unlink(path), rmdir(dir);
}
