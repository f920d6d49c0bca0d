/* Who holds a journal's lock (core/journal/journal.h): flock(2) does not say, so a refused
 * resume would only know "another process"; Linux lists every lock's pid in /proc/locks. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core/journal/journal.h"

long journal_lock_holder(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return 0;
    FILE *f = fopen("/proc/locks", "re");
    if (!f)
        return 0;
    /* "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF"; a waiter's line has "->" after
     * the number, and is not the holder. The device is major:minor in hex. */
    char line[512];
    long found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char type[16], mode[16], access[16];
        long pid;
        unsigned maj, min;
        unsigned long ino;
        if (strstr(line, "->") || sscanf(line, "%*[^:]: %15s %15s %15s %ld %x:%x:%lu", type, mode,
                                         access, &pid, &maj, &min, &ino) != 7)
            continue;
        if (strcmp(type, "FLOCK") == 0 && maj == major(st.st_dev) && min == minor(st.st_dev) &&
            ino == (unsigned long)st.st_ino && pid > 0)
            found = pid;
    }
    fclose(f);
    return found;
}
