/* Making a name durable: after a file is created in a folder or renamed into place, the
 * folder's own entry list must reach the disk too, or a power loss can leave the file (or the
 * new name) missing although the file's own fsync succeeded (fsync(2): "Calling fsync() does
 * not necessarily ensure that the entry in the directory containing the file has also reached
 * disk. For that an explicit fsync() on a file descriptor for the directory is also needed"). */
#ifndef TUNEDECK_DIRSYNC_H
#define TUNEDECK_DIRSYNC_H

/* fsync(2) of the folder `dir`; 0, or -1 with errno set. */
int dirsync(const char *dir);
/* fsync(2) of the folder that holds `path` (everything before its last '/', "." without
 * one); 0, or -1 with errno set. */
int dirsync_parent(const char *path);

#endif
